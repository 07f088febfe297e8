import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { ActionType, actionText, BagWriter, SchemaType, type Frame } from '@vlink/bag';
import { serve, type RunningServer } from './index.js';
import { decodeFrames, FrameEncoder } from './messages/binary-frame.js';
import { toBase64 } from '@vlink/bag-decode';
import { buildFixtureRoot, readAll, START_MS, type FixtureRoot } from './testing/fixtures.js';
import { openDescriptors } from './testing/open-files.js';

let fx: FixtureRoot;
let server: RunningServer;
const get = (path: string, init?: RequestInit) => fetch(server.url + path, init);
const getJson = async (path: string) => {
  const res = await get(path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { [k: string]: any } };
};
const lineOf = (f: Frame) =>
  JSON.stringify({
    timestamp: f.timestamp,
    ...(f.publishTime !== undefined ? { publishTime: f.publishTime } : {}),
    url: f.url,
    action: actionText(f.actionType),
    serType: f.serType,
    schemaType: f.schemaType,
    size: f.data.length,
    data: toBase64(f.data),
  });

before(async () => {
  fx = await buildFixtureRoot();
  server = await serve({ root: fx.root, port: 0 });
});
after(async () => {
  await server?.close();
  fx?.cleanup();
});

describe(`HTTP API (${(globalThis as { Bun?: unknown }).Bun ? 'bun' : (globalThis as { Deno?: unknown }).Deno ? 'deno' : 'node'})`, () => {
  test('health answers ok and the version', async () => {
    const { status, body } = await getJson('/v1/health');
    assert.equal(status, 200);
    assert.deepEqual(body, { ok: true, version: '0.1.0' });
  });

  test('bags lists supported bags recursively, inside the root only', async () => {
    const { status, body } = await getJson('/v1/bags');
    assert.equal(status, 200);
    const ids = (body.bags as Array<{ id: string }>).map((b) => b.id).sort();
    assert.deepEqual(ids, [
      'alias.vdb',
      'bad.vdb',
      'big.vcap',
      'drive.vdb',
      'mem.memjson',
      'proto.vdb',
      'runs/drive.vcap',
      'same-ts.vdb',
    ]);
    const drive = body.bags.find((b: { id: string }) => b.id === 'drive.vdb');
    assert.equal(drive.format, 'vdb');
    assert.equal(drive.messageCount, 120);
    assert.ok(drive.size > 1024 * 1024);
    assert.ok(!Number.isNaN(Date.parse(drive.modified)));
    const bad = body.bags.find((b: { id: string }) => b.id === 'bad.vdb');
    assert.equal(bad.messageCount, null);
    assert.equal(typeof bad.error.code, 'string');
  });

  test('info is the core Info with the id as path', async () => {
    const { status, body } = await getJson(`/v1/bags/${encodeURIComponent('runs/drive.vcap')}/info`);
    assert.equal(status, 200);
    assert.equal(body.path, 'runs/drive.vcap');
    assert.equal(body.format, 'vcap');
    assert.equal(body.messageCount, 120);
    assert.equal(body.startTimestamp, START_MS);
    assert.ok(Array.isArray(body.urls) && body.urls.length >= 5);
  });

  test('schemas come back base64', async () => {
    const { status, body } = await getJson('/v1/bags/proto.vdb/schemas');
    assert.equal(status, 200);
    const point = body.schemas.find((s: { name: string }) => s.name === 'test.Point');
    assert.ok(point);
    assert.equal(typeof point.data, 'string');
    assert.ok(point.data.length > 20);
  });

  test('timing reports rate, intervals and gaps per url', async () => {
    const { status, body } = await getJson('/v1/bags/drive.vdb/timing?factor=2&urls=dds://imu,dds://camera/front');
    assert.equal(status, 200);
    assert.equal(body.factor, 2);
    assert.deepEqual(
      body.urls.map((u: { url: string }) => u.url),
      ['dds://camera/front', 'dds://imu'],
    );
    const cam = body.urls[0];
    assert.equal(cam.count, 20);
    assert.equal(cam.intervalUs.p50, 60_000);
    assert.deepEqual(cam.gaps, []);
    const all = await getJson('/v1/bags/same-ts.vdb/timing');
    assert.equal(all.body.factor, 1.5, "the default is core's DEFAULT_GAP_FACTOR");
    assert.deepEqual(
      all.body.urls.map((u: { url: string }) => u.url),
      ['a', 'b'],
    );
  });

  test('report: per stream histograms, the groups asked for, counters; bad parameters are 400', async () => {
    const { status, body } = await getJson(
      '/v1/bags/drive.vdb/report?group=dds://camera/front,dds://imu&bins=4&tolerance=5000',
    );
    assert.equal(status, 200);
    assert.equal(body.path, 'drive.vdb', 'the id, not the server path');
    assert.equal(body.semantics, 1);
    const cam = body.streams.find((s: { url: string }) => s.url === 'dds://camera/front');
    assert.deepEqual([cam.action, cam.count, cam.intervalUs.p50, cam.time], ['Pub', 20, 60_000, 'log']);
    // 19 intervals of 60 ms: the second of 4 bins over 0 … 180 ms.
    assert.deepEqual(cam.intervalHistogram, {
      edges: [0, 45_000, 90_000, 135_000, 180_000],
      counts: [0, 19, 0, 0],
      under: 0,
      over: 0,
    });
    assert.deepEqual(
      body.groups.map(
        (g: { source: string; reference: string; toleranceUs: number; members: Array<{ url: string }> }) => [
          g.source,
          g.reference,
          g.toleranceUs,
          g.members.map((m) => m.url),
        ],
      ),
      [['given', 'dds://camera/front', 5000, ['dds://imu']]],
    );
    assert.deepEqual(body.counters, {});
    assert.equal((await getJson('/v1/bags/drive.vdb/report?bins=0')).status, 400);
    const unknown = await getJson('/v1/bags/drive.vdb/report?group=dds://imu,nope');
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error.message, /nope/);
  });

  test('timeBase=publish windows by publish time, in log order, across pages and in streams', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vlink-publish-'));
    // Log times every 10 ms; every odd frame was sampled 25 ms before it was logged.
    const writer = await BagWriter.create(join(dir, 'pub.vcap'), { syncMode: true });
    for (let i = 0; i < 20; i++)
      writer.push({
        timestamp: i * 10_000,
        publishTime: i * 10_000 - (i % 2 ? 25_000 : 0),
        url: 'a',
        data: new Uint8Array([i]),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    await writer.close();
    const own = await serve({ root: dir, port: 0 });
    try {
      const want = Array.from({ length: 20 }, (_, i) => [i * 10_000, i * 10_000 - (i % 2 ? 25_000 : 0)])
        .filter(([, p]) => p! >= 50_000 && p! <= 100_000)
        .map(([t]) => t);
      assert.deepEqual(want, [60_000, 80_000, 90_000, 100_000, 110_000]);
      const got: number[] = [];
      let cursor: string | null = null;
      do {
        const res: Response = await fetch(
          `${own.url}/v1/bags/pub.vcap/messages?begin=50&end=100&timeBase=publish&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(res.status, 200);
        const body = (await res.json()) as { messages: Array<{ timestamp: number }>; next: string | null };
        got.push(...body.messages.map((m) => m.timestamp));
        cursor = body.next;
      } while (cursor);
      assert.deepEqual(got, want);
      const ndjson = await (
        await fetch(`${own.url}/v1/bags/pub.vcap/messages?begin=50&end=100&timeBase=publish&format=ndjson`)
      ).text();
      assert.deepEqual(
        ndjson
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).timestamp),
        want,
      );
      const log = await (await fetch(`${own.url}/v1/bags/pub.vcap/messages?begin=50&end=100`)).json();
      assert.deepEqual(
        log.messages.map((m: { timestamp: number }) => m.timestamp),
        [50_000, 60_000, 70_000, 80_000, 90_000, 100_000],
      );
      assert.equal((await fetch(`${own.url}/v1/bags/pub.vcap/messages?timeBase=wall`)).status, 400);
    } finally {
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('json pages follow the cursor to the end and match the bag', async () => {
    const want = await readAll(join(fx.root, 'drive.vdb'));
    const got: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const { status, body } = await getJson(
        `/v1/bags/drive.vdb/messages?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(status, 200);
      for (const m of body.messages) got.push(JSON.stringify(m));
      cursor = body.next;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(got, want.map(lineOf));
  });

  test('paging is exact across frames sharing a timestamp, and limit is clamped', async () => {
    const want = (await readAll(join(fx.root, 'same-ts.vdb'))).map(lineOf);
    const got: string[] = [];
    let cursor: string | null = null;
    do {
      const { body } = await getJson(`/v1/bags/same-ts.vdb/messages?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.ok(body.messages.length <= 3);
      got.push(...body.messages.map((m: unknown) => JSON.stringify(m)));
      cursor = body.next;
    } while (cursor);
    assert.deepEqual(got, want);
    const one = await getJson('/v1/bags/same-ts.vdb/messages?limit=0');
    assert.equal(one.body.messages.length, 1);
    const all = await getJson('/v1/bags/same-ts.vdb/messages?limit=999999');
    assert.equal(all.body.messages.length, 25);
    assert.equal(all.body.next, null);
  });

  test('a json page stops early at 8 MiB of payload and the token continues', async () => {
    const first = await getJson('/v1/bags/big.vcap/messages?limit=10000');
    assert.equal(first.body.messages.length, 8);
    assert.ok(first.body.next);
    const second = await getJson(`/v1/bags/big.vcap/messages?cursor=${first.body.next}`);
    assert.equal(second.body.messages.length, 2);
    assert.equal(second.body.next, null);
    assert.deepEqual(
      [...first.body.messages, ...second.body.messages].map((m: { size: number }) => m.size),
      new Array(10).fill(1024 * 1024),
    );
  });

  test('begin/end (ms, inclusive) and urls filter', async () => {
    const { body } = await getJson(
      '/v1/bags/drive.vdb/messages?begin=100.001&end=300.001&urls=dds://imu,dds://camera/front',
    );
    const want = (await readAll(join(fx.root, 'drive.vdb'))).filter(
      (f) =>
        f.timestamp >= 100_001 && f.timestamp <= 300_001 && (f.url === 'dds://imu' || f.url === 'dds://camera/front'),
    );
    assert.ok(want.length > 5);
    assert.deepEqual(
      body.messages.map((m: unknown) => JSON.stringify(m)),
      want.map(lineOf),
    );
    const repeated = await getJson(
      '/v1/bags/drive.vdb/messages?begin=100.001&end=300.001&urls=dds://imu&urls=dds://camera/front',
    );
    assert.deepEqual(repeated.body, body);
  });

  test('a token survives a server restart (a new app on another port)', async () => {
    const first = await getJson('/v1/bags/runs%2Fdrive.vcap/messages?limit=25&urls=dds://imu');
    assert.ok(first.body.next);
    const other = await serve({ root: fx.root, port: 0 });
    try {
      const res = await fetch(`${other.url}/v1/bags/runs%2Fdrive.vcap/messages?limit=1000&cursor=${first.body.next}`);
      const second = (await res.json()) as { messages: unknown[]; next: null };
      const want = (await readAll(join(fx.root, 'runs/drive.vcap'), ['dds://imu'])).map(lineOf);
      assert.deepEqual(
        [...first.body.messages, ...second.messages].map((m) => JSON.stringify(m)),
        want,
      );
      assert.equal(second.next, null);
    } finally {
      await other.close();
    }
  });

  test('ndjson streams every frame, byte-exact', async () => {
    const res = await get('/v1/bags/drive.vdb/messages?format=ndjson');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const want = (await readAll(join(fx.root, 'drive.vdb'))).map((f) => `${lineOf(f)}\n`).join('');
    assert.equal(await res.text(), want);
  });

  test('binary streams every frame in the documented layout, byte-exact', async () => {
    const res = await get('/v1/bags/runs%2Fdrive.vcap/messages?format=binary');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.vlink.frames');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const frames = await readAll(join(fx.root, 'runs/drive.vcap'));
    const encoder = new FrameEncoder();
    const want = new Uint8Array(frames.reduce((n, f) => n + encoder.sizeOf(f), 0));
    const view = new DataView(want.buffer);
    let at = 0;
    for (const f of frames) at = encoder.writeInto(f, want, view, at);
    assert.equal(bytes.length, want.length);
    assert.ok(
      bytes.every((b, i) => b === want[i]),
      'bytes differ',
    );
    const decoded = decodeFrames(bytes);
    assert.equal(decoded.length, frames.length);
    assert.equal(decoded[2]!.data.length, frames[2]!.data.length);
    assert.equal(decoded[5]!.url, frames[5]!.url);
    // Layout spot check: first frame header by hand.
    const dv = new DataView(bytes.buffer, bytes.byteOffset);
    const urlLen = dv.getUint16(18, true);
    assert.equal(dv.getUint32(0, true), 14 + urlLen + dv.getUint16(20 + urlLen, true));
    assert.equal(Number(dv.getBigInt64(8, true)), frames[0]!.timestamp);
    assert.equal(bytes[16], frames[0]!.actionType);
  });

  test('a client leaving mid-stream releases the reader (the stream is cancelled, not drained)', async (t) => {
    const perRequest = await serve({ root: fx.root, port: 0, readerCache: 0 });
    const bag = join(fx.root, 'big.vcap');
    try {
      if (openDescriptors(bag) === undefined) return t.skip('no /proc/self/fd to count open files');
      for (const format of ['ndjson', 'binary']) {
        // Other servers of this suite keep readers of this bag cached: count this request's own.
        const before = openDescriptors(bag)!;
        const abort = new AbortController();
        const res = await fetch(`${perRequest.url}/v1/bags/big.vcap/messages?format=${format}`, {
          signal: abort.signal,
        });
        const reader = res.body!.getReader();
        const first = await reader.read();
        assert.ok(first.value && first.value.length > 0);
        assert.ok(openDescriptors(bag)! > before, `${format}: the bag is open while streaming`);
        abort.abort();
        await reader.cancel().catch(() => undefined);
        // The reader (in a bag worker: threads share the process's descriptors) is closed once the client left.
        const deadline = Date.now() + 5000;
        while (openDescriptors(bag)! > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        assert.equal(openDescriptors(bag), before, `${format}: reader closed after the client left`);
      }
    } finally {
      await perRequest.close();
    }
  });

  test('decode=true turns protobuf (embedded descriptor), JSON and text payloads into JSON', async () => {
    const { status, body } = await getJson('/v1/bags/proto.vdb/messages?decode=true&limit=6');
    assert.equal(status, 200);
    const [p0, j1, t2, p3] = body.messages;
    assert.equal(p0.decoded, 'protobuf');
    assert.deepEqual(p0.data, { x: 0.5, y: -1, label: 'p0' });
    assert.deepEqual(p3.data, { x: 3.5, y: -4, label: 'p3' });
    assert.equal(j1.decoded, 'json');
    assert.deepEqual(j1.data, { i: 1, ok: true });
    assert.equal(t2.decoded, 'text');
    assert.equal(t2.data, 'line 2');
    const nd = await (await get('/v1/bags/proto.vdb/messages?decode=1&format=ndjson&urls=pb/point')).text();
    const lines = nd
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 10);
    assert.deepEqual(lines[9].data, { x: 27.5, y: -28, label: 'p27' });
    const named = await getJson('/v1/bags/proto.vdb/messages?decode=true&jsonNames=true&urls=pb/point&limit=1');
    assert.deepEqual(named.body.messages[0].data, { x: 0.5, y: -1, labelText: 'p0' }, 'the json_name');
    const streamed = await (
      await get('/v1/bags/proto.vdb/messages?decode=1&jsonNames=1&format=ndjson&urls=pb/point')
    ).text();
    assert.deepEqual(JSON.parse(streamed.split('\n')[9]!).data, { x: 27.5, y: -28, labelText: 'p27' });
  });

  test('openapi.json describes every route; docs page is self-contained; / leads to the player or the docs', async () => {
    const { status, body } = await getJson('/v1/openapi.json');
    assert.equal(status, 200);
    for (const path of [
      '/v1/health',
      '/v1/bags',
      '/v1/bags/{id}/info',
      '/v1/bags/{id}/schemas',
      '/v1/bags/{id}/timing',
      '/v1/bags/{id}/report',
      '/v1/bags/{id}/messages',
      '/v1/bags/{id}/replay',
      '/v1/bags/{id}/foxglove',
    ]) {
      assert.ok(body.paths[path], `missing ${path}`);
    }
    assert.equal((await getJson('/openapi.json')).status, 200);
    const docs = await get('/v1/docs');
    const html = await docs.text();
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(html.includes('/v1/openapi.json'));
    assert.ok(!/src=["']https?:/.test(html) && !/href=["']https?:/.test(html), 'no CDN');
    // `/` is the web player once it is built (its own tests cover it), the docs until then.
    const root = await get('/', { redirect: 'manual' });
    if (root.status === 302) assert.equal(root.headers.get('location'), '/v1/docs');
    else assert.match(`${root.status} ${root.headers.get('content-type')}`, /^200 text\/html/);
    await root.body?.cancel();
  });
});
