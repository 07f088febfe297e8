import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { OpenAPIHono } from '@hono/zod-openapi';
import { BagReader } from '@vlink/bag';
import { createApp, type BagApp } from '../index.js';
import { buildFixtureRoot, type FixtureRoot } from '../testing/fixtures.js';
import { registerUpload } from './upload-route.js';

const TOKEN = 'upload-token';
let fx: FixtureRoot;
let app: BagApp;
let open: BagApp;
let vcap: Uint8Array<ArrayBuffer>;

before(async () => {
  fx = await buildFixtureRoot();
  app = createApp({ root: fx.root, token: TOKEN });
  open = createApp({ root: fx.root });
  vcap = new Uint8Array(readFileSync(join(fx.root, 'runs', 'drive.vcap')));
  symlinkSync(fx.outside, join(fx.root, 'out'));
});
after(async () => {
  await app?.close();
  await open?.close();
  fx?.cleanup();
});

const put = (target: BagApp | OpenAPIHono, id: string, body: Uint8Array | string, token: string | null = TOKEN) =>
  target.request(`/v1/bags/${id}`, {
    method: 'PUT',
    body: body as BodyInit,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

async function code(res: Response): Promise<string> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.ok(!body.error.message.includes(fx.root), `server path leaked: ${body.error.message}`);
  return body.error.code;
}

/** No stray temporary file anywhere under the root after a request. */
function noTempFiles(dir = fx.root): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    assert.ok(!entry.name.includes('.upload-'), `left behind: ${entry.name}`);
    if (entry.isDirectory() && !entry.isSymbolicLink()) noTempFiles(join(dir, entry.name));
  }
}

describe('PUT /v1/bags/{id} (upload)', () => {
  test('stores a bag once, byte for byte, and serves it', async () => {
    const res = await put(app, 'results%2Fday1%2Fcopy.vcap', vcap);
    assert.equal(res.status, 201);
    const body = (await res.json()) as { id: string; format: string; size: number; messageCount: number };
    assert.deepEqual(body, { id: 'results/day1/copy.vcap', format: 'vcap', size: vcap.length, messageCount: 120 });
    assert.deepEqual(new Uint8Array(readFileSync(join(fx.root, 'results', 'day1', 'copy.vcap'))), vcap);
    const info = await app.request('/v1/bags/results%2Fday1%2Fcopy.vcap/info', {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(((await info.json()) as { messageCount: number }).messageCount, 120);
    noTempFiles();
  });

  test('never overwrites', async () => {
    const first = await put(app, 'once.vcap', vcap);
    assert.equal(first.status, 201);
    await first.body?.cancel();
    const again = await put(app, 'once.vcap', new Uint8Array([1, 2, 3]));
    assert.equal(again.status, 409);
    assert.equal(await code(again), 'ALREADY_EXISTS');
    assert.deepEqual(new Uint8Array(readFileSync(join(fx.root, 'once.vcap'))), vcap);
    const existing = await put(app, 'drive.vdb', vcap);
    assert.equal(existing.status, 409, 'a bag the server already serves is never replaced');
    await existing.body?.cancel();
  });

  test('needs the token, and a server that has one', async () => {
    const anonymous = await put(app, 'anon.vcap', vcap, null);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const wrong = await put(app, 'anon.vcap', vcap, 'nope');
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    const tokenless = await put(open, 'anon.vcap', vcap, null);
    assert.equal(tokenless.status, 403);
    assert.equal(await code(tokenless), 'UNAUTHORIZED');
    assert.ok(!existsSync(join(fx.root, 'anon.vcap')));
  });

  test('stays inside the root and takes single-file bag names only', async () => {
    for (const id of [
      '..%2Fescaped.vcap',
      'a%2F..%2F..%2Fescaped.vcap',
      '%2Ftmp%2Fescaped.vcap',
      '.hidden.vcap',
      'runs%2F.x.vcap',
      'notes.txt',
      'split.vcapx',
      'split.vdbx',
      'nul%00.vcap',
    ]) {
      const res = await put(app, id, vcap);
      assert.equal(res.status, 400, id);
      assert.equal(await code(res), 'INVALID_ARGUMENT');
    }
    const out = await put(app, 'out%2Fescaped.vcap', vcap);
    assert.equal(out.status, 404, 'a symlinked directory leading outside is refused');
    await out.body?.cancel();
    // What the fixture wrote there (the bag and its summary sidecar), and nothing else.
    assert.deepEqual(readdirSync(fx.outside).sort(), ['secret.vdb', 'secret.vdb.json']);
    noTempFiles();
  });

  test('takes names up to the filesystem limit (255 bytes), refuses longer ones with 400, never a 500', async () => {
    // The temporary file used to be named after the bag: a legal 250-byte name then made one too long to create.
    const longest = `${'b'.repeat(250)}.vcap`;
    const stored = await put(app, longest, vcap);
    assert.equal(stored.status, 201);
    assert.deepEqual(new Uint8Array(readFileSync(join(fx.root, longest))), vcap);
    for (const id of [`${'c'.repeat(251)}.vcap`, `${'d'.repeat(300)}%2Fx.vcap`, `${'é'.repeat(126)}.vcap`]) {
      const res = await put(app, id, vcap);
      assert.equal(res.status, 400, id);
      assert.equal(await code(res), 'INVALID_ARGUMENT');
    }
    noTempFiles();
  });

  test('keeps only what opens as a bag', async () => {
    const res = await put(app, 'garbage.vcap', new TextEncoder().encode('not an mcap file at all'));
    assert.equal(res.status, 422);
    assert.match(await code(res), /CORRUPT_FILE|UNSUPPORTED_FORMAT/);
    const empty = await put(app, 'empty.vcap', new Uint8Array(0));
    assert.equal(empty.status, 400);
    await empty.body?.cancel();
    assert.ok(!existsSync(join(fx.root, 'garbage.vcap')) && !existsSync(join(fx.root, 'empty.vcap')));
    noTempFiles();
  });

  test('takes the single-file foreign formats too, Apollo numbered names included', async () => {
    // What the local reader makes of the same file.
    const expected = async (relative: string[]) => {
      const reader = await BagReader.create(fixturePath(...relative));
      try {
        return reader.getInfo().messageCount;
      } finally {
        reader.close();
      }
    };
    for (const [id, relative, format] of [
      ['car%2Frun.record.00000', ['foreign', 'apollo', 'sensors.record'], 'record'],
      ['car%2Fdrive.bag', ['foreign', 'ros1', 'plain.bag'], 'bag'],
      ['car%2Fflight.ulg', ['foreign', 'ulog', 'flight.ulg'], 'ulg'],
    ] as const) {
      const bytes = new Uint8Array(readFileSync(fixturePath(...relative)));
      const res = await put(app, id, bytes);
      assert.equal(res.status, 201, id);
      const body = (await res.json()) as { id: string; format: string; size: number; messageCount: number };
      const stored = decodeURIComponent(id);
      assert.deepEqual(body, { id: stored, format, size: bytes.length, messageCount: await expected([...relative]) });
      assert.deepEqual(new Uint8Array(readFileSync(join(fx.root, ...stored.split('/')))), bytes);
      const info = await app.request(`/v1/bags/${id}/info`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(((await info.json()) as { messageCount: number }).messageCount, body.messageCount, `served ${id}`);
    }
    // A name of a format the server reads but that is not one file (a rosbag2 storage) or of no format at all.
    for (const id of ['car%2Frun.db3', 'car%2Frun.00000', 'car%2Frun.bag.1']) {
      const res = await put(app, id, vcap);
      assert.equal(res.status, 400, id);
      assert.equal(await code(res), 'INVALID_ARGUMENT');
    }
    const notRecord = await put(app, 'car%2Fbad.record.00001', vcap);
    assert.equal(notRecord.status, 422, 'a body that is not an Apollo record is refused by its reader');
    await notRecord.body?.cancel();
    assert.ok(!existsSync(join(fx.root, 'car', 'bad.record.00001')));
    noTempFiles();
  });

  test('bounds the size, declared or streamed', async () => {
    const small = new OpenAPIHono();
    mkdirSync(join(fx.root, 'small'));
    registerUpload(small, { root: join(fx.root, 'small'), token: TOKEN, maxBytes: 1000 });
    const declared = await put(small, 'x.vcap', vcap);
    assert.equal(declared.status, 413);
    assert.equal(await code(declared), 'TOO_LARGE');
    const chunks = [vcap.subarray(0, 600), vcap.subarray(600, 1200)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const streamed = await small.request('/v1/bags/y.vcap', {
      method: 'PUT',
      body: stream,
      headers: { authorization: `Bearer ${TOKEN}` },
      duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 413);
    await streamed.body?.cancel();
    assert.deepEqual(readdirSync(join(fx.root, 'small')), []);
    writeFileSync(join(fx.root, 'small', 'keep.txt'), 'x');
  });
});
