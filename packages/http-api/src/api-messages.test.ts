import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@vlink/fixtures/test';
import { serve } from './index.js';
import { decodeFrames, FrameEncoder } from '@vlink/bag-decode';
import { readAll } from './testing/fixtures.js';
import { publishTimeOf, writePublishTimeBag } from './testing/publish-time-bag.js';
import { expectedLine as lineOf, serveFixtureRoot } from './testing/fixture-server.js';
import { openDescriptors } from './testing/open-files.js';

// `/v1/bags/{id}/messages`: JSON pages and their cursor, windows, NDJSON and binary streams, decoding.
const served = serveFixtureRoot();
const { get, getJson } = served;

describe(`HTTP API messages (${(globalThis as { Bun?: unknown }).Bun ? 'bun' : (globalThis as { Deno?: unknown }).Deno ? 'deno' : 'node'})`, () => {
  test('timeBase=publish windows by publish time, in log order, across pages and in streams', async () => {
    const dir = await writePublishTimeBag('pub.vcap');
    const own = await serve({ root: dir, port: 0 });
    try {
      const want = Array.from({ length: 20 }, (_, i) => [i * 10_000, publishTimeOf(i)])
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
    const want = await readAll(join(served.fx.root, 'drive.vdb'));
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
    const want = (await readAll(join(served.fx.root, 'same-ts.vdb'))).map(lineOf);
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
    const want = (await readAll(join(served.fx.root, 'drive.vdb'))).filter(
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
    const other = await serve({ root: served.fx.root, port: 0 });
    try {
      const res = await fetch(`${other.url}/v1/bags/runs%2Fdrive.vcap/messages?limit=1000&cursor=${first.body.next}`);
      const second = (await res.json()) as { messages: unknown[]; next: null };
      const want = (await readAll(join(served.fx.root, 'runs/drive.vcap'), ['dds://imu'])).map(lineOf);
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
    const want = (await readAll(join(served.fx.root, 'drive.vdb'))).map((f) => `${lineOf(f)}\n`).join('');
    assert.equal(await res.text(), want);
  });

  test('binary streams every frame in the documented layout, byte-exact', async () => {
    const res = await get('/v1/bags/runs%2Fdrive.vcap/messages?format=binary');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.vlink.frames');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const frames = await readAll(join(served.fx.root, 'runs/drive.vcap'));
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
    const perRequest = await serve({ root: served.fx.root, port: 0, readerCache: 0 });
    const bag = join(served.fx.root, 'big.vcap');
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
});
