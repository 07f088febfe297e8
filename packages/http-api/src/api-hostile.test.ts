import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, BagWriter, registerBackend, SchemaType, type Frame } from '@vlink/bag';
import { memoryBackend, sampleFrames } from '@vlink/bag-core/testing';
import { createApp, serve, type RunningServer } from './index.js';
import { decodeFrames } from '@vlink/bag-decode';
import { hangBackend } from './testing/hang-backend.js';
import {
  corruptMidwayVcap,
  deepJsonBag,
  fifoJournalVdb,
  fifoSegmentVdbx,
  generatedColumnVdb,
  mkfifo,
  recursiveViewVdb,
  symlinkedJournalVdb,
  symlinkedSegmentVdbx,
  triggerVdb,
  virtualTableVdb,
} from './testing/hostile-bags.js';
import { rawGet, upgradeHeaders, type RawResponse } from './testing/raw-http.js';

// The security suite of issue 21: each hostile input is built, served, and refused; meanwhile the server keeps
// answering, and no byte any client receives names a server path.

registerBackend(hangBackend);
registerBackend(memoryBackend);
/** A backend whose `workerModule` does not export it (a program's mistake): the workers cannot load it. */
registerBackend({
  ...memoryBackend,
  name: 'test-unloadable',
  extensions: ['.unloadable'],
  workerModule: new URL('./testing/hang-backend.js', import.meta.url).href,
});

const TOKEN = 'hostile-suite-token';
const OPEN_DEADLINE_MS = 1500;
/**
 * What "keeps answering" means here: health and a normal bag answer within this while a hostile bag is opened. A
 * server whose event loop a hostile bag blocked would not answer at all (those opens never end); the margin is for a
 * machine shared with other work.
 */
const ANSWER_WITHIN_MS = 2000;

const base = mkdtempSync(join(tmpdir(), 'vlink-hostile-'));
const root = join(base, 'root');
const outside = join(base, 'outside');
const received: Array<{ what: string; bytes: Uint8Array }> = [];
const has = { virtual: false, fifo: false, fifoSegment: false, fifoJournal: false };
let framesBeforeCorruption = 0;
let server: RunningServer;
let host = '';

before(async () => {
  mkdirSync(join(root, 'hostile'), { recursive: true });
  mkdirSync(outside);
  await write(join(root, 'good.vdb'), sampleFrames(120));
  await recursiveViewVdb(join(root, 'hostile', 'view.vdb'));
  await triggerVdb(join(root, 'hostile', 'trigger.vdb'));
  has.virtual = await virtualTableVdb(join(root, 'hostile', 'virtual.vdb'));
  await generatedColumnVdb(join(root, 'hostile', 'generated.vdb'));
  await symlinkedSegmentVdbx(root, outside, 'evil');
  await symlinkedJournalVdb(join(root, 'journal-link.vdb'), join(outside, 'planted-journal'));
  has.fifo = mkfifo(join(root, 'fifo.vdb')) && mkfifo(join(root, 'fifo.vcap'));
  has.fifoSegment = await fifoSegmentVdbx(root, 'fifo-segment');
  has.fifoJournal = await fifoJournalVdb(join(root, 'fifo-journal.vdb'));
  await deepJsonBag(join(root, 'deep.vdb'), 8000);
  await manyUrlsBag(join(root, 'many-urls.vdb'), 300);
  framesBeforeCorruption = await corruptMidwayVcap(join(root, 'corrupt.vcap'));
  await write(join(root, 'mem.memjson'), sampleFrames(12));
  renameSync(join(root, 'mem.memjson'), join(root, 'mem.unloadable'));
  server = await serve({
    root,
    port: 0,
    workers: 2,
    deadlines: { openMs: OPEN_DEADLINE_MS, requestMs: 10_000 },
  });
  host = `127.0.0.1:${server.port}`;
  // Start the workers (they load the backends): "keeps answering" is about a running server, not its first second.
  assert.equal((await get('/v1/bags/good.vdb/info')).status, 200);
});

after(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

async function write(path: string, frames: Frame[]): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true });
  for (const frame of frames) writer.push({ ...frame });
  await writer.close();
}

/** A bag with `count` urls of one message each (for the density limit). */
async function manyUrlsBag(path: string, count: number): Promise<void> {
  const frames: Frame[] = [];
  for (let i = 0; i < count; i++)
    frames.push({
      timestamp: 1_000 + i * 1_000,
      url: `dds://u${String(i).padStart(4, '0')}`,
      data: new Uint8Array([i & 0xff]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await write(path, frames);
}

/** GET through fetch, keeping every byte received (incomplete bodies too) for the no-path check. */
async function get(
  path: string,
  init: RequestInit = {},
  on: RunningServer = server,
): Promise<{ status: number; text: string; complete: boolean; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${on.url}${path}`, init);
  const reader = res.body!.getReader();
  const parts: Uint8Array[] = [];
  let complete = true;
  try {
    for (;;) {
      const step = await reader.read();
      if (step.done) break;
      parts.push(step.value);
    }
  } catch {
    complete = false;
  }
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  received.push({ what: path, bytes });
  return { status: res.status, text: new TextDecoder().decode(bytes), complete, ms: performance.now() - started };
}

async function raw(path: string, headers: Record<string, string>): Promise<RawResponse> {
  const response = await rawGet(server.port, path, headers);
  received.push({ what: `raw ${path}`, bytes: response.raw });
  return response;
}

function errorOf(text: string): { code: string; message: string } {
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  return body.error;
}

/** Health and a normal bag while `during` runs: every answer must come within ANSWER_WITHIN_MS. */
async function keepsAnswering<T>(during: Promise<T>): Promise<T> {
  let done = false;
  const result = during.finally(() => (done = true));
  let rounds = 0;
  do {
    const [health, info] = await Promise.all([get('/v1/health'), get('/v1/bags/good.vdb/info')]);
    assert.equal(health.status, 200);
    assert.equal(info.status, 200, info.text);
    assert.ok(health.ms < ANSWER_WITHIN_MS, `health answered in ${health.ms.toFixed(0)} ms`);
    assert.ok(info.ms < ANSWER_WITHIN_MS, `a normal bag answered in ${info.ms.toFixed(0)} ms`);
    rounds++;
    await new Promise((r) => setTimeout(r, 50));
  } while (!done);
  assert.ok(rounds >= 1);
  return result;
}

describe('hostile bags and requests (issue 21)', () => {
  test('SQLite schemas that could run without end are refused with CORRUPT_FILE, and the server keeps answering', async () => {
    const cases: Array<[string, RegExp]> = [
      ['hostile%2Fview.vdb', /view "VLinkHeader"/],
      ['hostile%2Ftrigger.vdb', /trigger "evil"/],
      ['hostile%2Fgenerated.vdb', /VLinkHeader\.tag is a generated column/],
    ];
    if (has.virtual) cases.push(['hostile%2Fvirtual.vdb', /virtual table "extra"/]);
    for (const [id, reason] of cases) {
      for (const route of ['info', 'messages', 'messages?format=ndjson', 'schemas']) {
        const res = await keepsAnswering(get(`/v1/bags/${id}/${route}`));
        assert.equal(res.status, 422, `${id} ${route}: ${res.text}`);
        const error = errorOf(res.text);
        assert.equal(error.code, 'CORRUPT_FILE');
        assert.match(error.message, reason);
        assert.ok(res.ms < OPEN_DEADLINE_MS, `${id} refused in ${res.ms.toFixed(0)} ms`);
      }
    }
    const list = JSON.parse((await get('/v1/bags')).text) as { bags: Array<{ id: string; error?: { code: string } }> };
    assert.equal(list.bags.find((b) => b.id === 'hostile/view.vdb')?.error?.code, 'CORRUPT_FILE');
  });

  test('a split segment or a SQLite journal leading outside the root is refused; its bytes are never served', async () => {
    for (const route of ['messages', 'messages?format=ndjson', 'messages?format=binary', 'info']) {
      const res = await get(`/v1/bags/evil.vdbx/${route}`);
      assert.equal(res.status, 422, `${route}: ${res.text}`);
      const error = errorOf(res.text);
      assert.equal(error.code, 'CORRUPT_FILE');
      assert.match(error.message, /segment resolves outside the directory.*\(file evil\.2\.vdb\)/);
    }
    const journal = await get('/v1/bags/journal-link.vdb/messages');
    assert.equal(journal.status, 422, journal.text);
    assert.match(errorOf(journal.text).message, /sidecar resolves outside/);
    // A symlink to an outside file is not served under its own id either.
    const direct = await get('/v1/bags/evil.2.vdb/messages');
    assert.equal(direct.status, 404);
  });

  test('FIFOs are refused everywhere: as a bag, as a split segment, as a SQLite journal', async (t) => {
    if (!has.fifo) return t.skip('mkfifo is not available');
    for (const id of ['fifo.vdb', 'fifo.vcap']) {
      const res = await keepsAnswering(get(`/v1/bags/${id}/info`));
      assert.equal(res.status, 404, res.text);
    }
    const list = JSON.parse((await get('/v1/bags')).text) as { bags: Array<{ id: string }> };
    assert.ok(!list.bags.some((b) => b.id.startsWith('fifo.')), 'a FIFO is not listed');
    if (has.fifoSegment) {
      const res = await keepsAnswering(get('/v1/bags/fifo-segment.vdbx/info'));
      assert.equal(res.status, 422, res.text);
      assert.match(errorOf(res.text).message, /FIFO/);
    }
    if (has.fifoJournal) {
      const res = await keepsAnswering(get('/v1/bags/fifo-journal.vdb/info'));
      assert.equal(res.status, 422, res.text);
      assert.match(errorOf(res.text).message, /sidecar is a FIFO/);
    }
  });

  test('a bag whose open never returns: TIMEOUT at the deadline, the stuck worker is replaced, the bag quarantined', async () => {
    // Planted only now, so the listings of the other tests do not open it first.
    writeFileSync(join(root, 'stuck.hang'), 'a bag whose backend never returns from open');
    const stuck = await keepsAnswering(get('/v1/bags/stuck.hang/info'));
    assert.equal(stuck.status, 503, stuck.text);
    assert.equal(errorOf(stuck.text).code, 'TIMEOUT');
    assert.ok(stuck.ms >= OPEN_DEADLINE_MS - 50 && stuck.ms < OPEN_DEADLINE_MS + 3000, `${stuck.ms} ms`);
    // The worker does not answer its cancel: after the grace period (5 s) it is terminated and the bag refused at once.
    await keepsAnswering(new Promise((r) => setTimeout(r, 7000)));
    const again = await get('/v1/bags/stuck.hang/info');
    assert.equal(again.status, 503);
    assert.match(errorOf(again.text).message, /made a worker hang and is refused until the file changes/);
    assert.ok(again.ms < 500, `refused in ${again.ms.toFixed(0)} ms`);
    const stream = await get('/v1/bags/good.vdb/messages?format=ndjson');
    assert.equal(stream.status, 200);
    assert.equal(stream.text.trim().split('\n').length, 120, 'a replacement worker serves the other bags');
    rmSync(join(root, 'stuck.hang'));
  });

  test('a backend the workers cannot load takes no other bag down; its bags are read on the server thread', async () => {
    const res = await get('/v1/bags/mem.unloadable/info');
    assert.equal(res.status, 200, res.text);
    assert.equal((JSON.parse(res.text) as { messageCount: number }).messageCount, 12);
    const good = await get('/v1/bags/good.vdb/messages?format=ndjson');
    assert.equal(good.text.trim().split('\n').length, 120);
  });

  test('JSON nested 8000 levels deep decodes to a typed decode error for that frame; the page still answers', async () => {
    for (const format of ['json', 'ndjson']) {
      const res = await get(`/v1/bags/deep.vdb/messages?decode=true&format=${format}`);
      assert.equal(res.status, 200, res.text);
      const messages =
        format === 'json'
          ? (JSON.parse(res.text) as { messages: Array<Record<string, unknown>> }).messages
          : res.text
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(messages.length, 2);
      assert.equal(messages[0]!.decoded, null);
      assert.equal(messages[0]!.decodeError, 'nested deeper than 256 levels');
      assert.equal(messages[0]!.size, 16000);
      assert.deepEqual([messages[1]!.decoded, messages[1]!.data], ['json', { ok: true }]);
    }
  });

  test('density is capped at buckets × urls with a 413 that says how much; within the cap it answers', async () => {
    const over = await get('/v1/bags/many-urls.vdb/density?buckets=5000');
    assert.equal(over.status, 413, over.text);
    const error = errorOf(over.text);
    assert.equal(error.code, 'TOO_LARGE');
    assert.match(error.message, /300 urls × 5000 buckets = 1500000 counts, over the limit of 1000000/);
    assert.ok(over.text.length < 1000);
    const within = await get('/v1/bags/many-urls.vdb/density?buckets=100');
    assert.equal(within.status, 200);
    const density = JSON.parse(within.text) as { total: number; urls: unknown[] };
    assert.deepEqual([density.total, density.urls.length], [300, 300]);
  });

  test('a Host the server does not answer to (DNS rebinding) is refused, on HTTP and on the WebSocket upgrade', async () => {
    for (const name of ['evil.example', `evil.example:${server.port}`, `127.0.0.1:${server.port + 1}`]) {
      const http = await raw('/v1/bags', { Host: name });
      assert.equal(http.status, 421, name);
      assert.equal(errorOf(new TextDecoder().decode(http.body)).code, 'MISDIRECTED_REQUEST');
      const ws = await raw('/v1/bags/good.vdb/replay', upgradeHeaders(name));
      assert.equal(ws.status, 421, `upgrade with Host ${name}`);
    }
    for (const name of [host, `localhost:${server.port}`, `[::1]:${server.port}`]) {
      const ok = await raw('/v1/health', { Host: name });
      assert.equal(ok.status, 200, name);
    }
    const upgraded = await raw('/v1/bags/good.vdb/replay', upgradeHeaders(host));
    assert.equal(upgraded.status, 101);
  });

  test('a foreign Origin is refused (HTTP 403, no WebSocket); the own origin and listed ones are served', async () => {
    const foreign = await raw('/v1/bags/good.vdb/info', { Host: host, Origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.match(errorOf(new TextDecoder().decode(foreign.body)).message, /--allow-origin https:\/\/evil\.example/);
    const ws = await raw('/v1/bags/good.vdb/replay', upgradeHeaders(host, { Origin: 'https://evil.example' }));
    assert.equal(ws.status, 403);
    const nullOrigin = await raw('/v1/bags/good.vdb/replay', upgradeHeaders(host, { Origin: 'null' }));
    assert.equal(nullOrigin.status, 403);
    const own = await raw('/v1/bags/good.vdb/replay', upgradeHeaders(host, { Origin: `http://${host}` }));
    assert.equal(own.status, 101);
    const studio = await serve({ root, port: 0, workers: 1, allowOrigins: ['https://app.foxglove.dev'] });
    try {
      const at = `127.0.0.1:${studio.port}`;
      const headers = upgradeHeaders(at, {
        Origin: 'https://app.foxglove.dev',
        'Sec-WebSocket-Protocol': 'foxglove.websocket.v1',
      });
      const foxglove = await rawGet(studio.port, '/v1/bags/good.vdb/foxglove', headers);
      assert.equal(foxglove.status, 101);
      const other = await rawGet(studio.port, '/v1/bags/good.vdb/foxglove', {
        ...headers,
        Origin: 'https://evil.example',
      });
      assert.equal(other.status, 403);
    } finally {
      await studio.close();
    }
  });

  test('CORS for any origin needs a token; ?token= works only on a real WebSocket upgrade', async () => {
    assert.throws(
      () => createApp({ root, cors: true }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT' && /token/.test(e.message),
    );
    const locked = await serve({ root, port: 0, workers: 1, token: TOKEN });
    try {
      const at = `127.0.0.1:${locked.port}`;
      const sneaky = await rawGet(locked.port, `/v1/bags?token=${TOKEN}`, upgradeHeaders(at));
      assert.equal(sneaky.status, 401, 'an Upgrade header on a plain route does not make ?token= valid');
      const wsRoute = await rawGet(locked.port, `/v1/bags/good.vdb/replay?token=${TOKEN}`, upgradeHeaders(at));
      assert.equal(wsRoute.status, 101);
      const wrong = await rawGet(locked.port, '/v1/bags/good.vdb/replay?token=x', upgradeHeaders(at));
      assert.equal(wrong.status, 401);
      const bearer = await rawGet(locked.port, '/v1/bags', { Host: at, Authorization: `Bearer ${TOKEN}` });
      assert.equal(bearer.status, 200);
    } finally {
      await locked.close();
    }
  });

  test('a stream that fails after its headers aborts the connection: NDJSON after a typed error line', async () => {
    const ndjson = await raw('/v1/bags/corrupt.vcap/messages?format=ndjson', { Host: host });
    assert.equal(ndjson.status, 200);
    assert.equal(ndjson.complete, false, 'the chunked body has no terminating chunk');
    const lines = new TextDecoder().decode(ndjson.body).trim().split('\n');
    assert.equal(lines.length, framesBeforeCorruption + 1, 'every frame read before the damage, then the error');
    const last = JSON.parse(lines.at(-1)!) as { error: { code: string; message: string } };
    assert.match(last.error.code, /^CORRUPT_(FILE|DATA)$/);
    assert.match(last.error.message, /\(file corrupt\.vcap, offset \d+\)/);
    const binary = await raw('/v1/bags/corrupt.vcap/messages?format=binary', { Host: host });
    assert.equal(binary.status, 200);
    assert.equal(binary.complete, false);
    assert.equal(decodeFrames(binary.body).length, framesBeforeCorruption, 'whole frames only, then the abort');
    for (const format of ['ndjson', 'binary']) {
      const viaFetch = await get(`/v1/bags/corrupt.vcap/messages?format=${format}`);
      assert.equal(viaFetch.complete, false, `${format}: fetch sees an incomplete body`);
    }
  });

  test('no response body, error line or aborted stream named a server path', () => {
    const real = realpathSync(base);
    assert.ok(received.length > 40, `${received.length} responses checked`);
    for (const { what, bytes } of received) {
      const text = new TextDecoder().decode(bytes);
      for (const path of [base, real, root, outside, tmpdir()])
        assert.ok(!text.includes(path), `${what} named ${path}: ${text.slice(0, 300)}`);
      assert.ok(!/\n\s+at /.test(text), `${what}: a stack`);
    }
  });
});
