import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { serve, type RunningServer } from '../index.js';
import { buildFixtureRoot, readAll, type FixtureRoot } from '../testing/fixtures.js';

let fx: FixtureRoot;
let server: RunningServer;
let guarded: RunningServer;
const getJson = async (path: string, base = server.url) => {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as any };
};

before(async () => {
  fx = await buildFixtureRoot();
  server = await serve({ root: fx.root, port: 0 });
  guarded = await serve({ root: fx.root, port: 0, token: 'sesame' });
});
after(async () => {
  await server?.close();
  await guarded?.close();
  fx?.cleanup();
});

describe('density', () => {
  test('counts every message once, per url and bucket, as a reference pass does', async () => {
    const { status, body } = await getJson('/v1/bags/drive.vdb/density?buckets=10');
    assert.equal(status, 200);
    const info = (await getJson('/v1/bags/drive.vdb/info')).body;
    assert.equal(body.buckets, 10);
    assert.equal(body.beginMs, 0);
    assert.equal(body.endMs, info.totalDuration);
    assert.equal(body.total, 120);
    const frames = await readAll(join(fx.root, 'drive.vdb'));
    const spanUs = info.totalDuration * 1000;
    const expected = new Map<string, number[]>();
    for (const f of frames) {
      const counts = expected.get(f.url) ?? new Array(10).fill(0);
      expected.set(f.url, counts);
      counts[Math.min(9, Math.floor((f.timestamp * 10) / spanUs))]++;
    }
    assert.deepEqual(
      body.urls.map((u: { url: string }) => u.url),
      [...expected.keys()].sort(),
    );
    for (const u of body.urls) {
      assert.deepEqual(u.counts, expected.get(u.url), u.url);
      assert.equal(
        u.count,
        expected.get(u.url)!.reduce((a, b) => a + b, 0),
      );
      assert.equal(u.max, Math.max(...u.counts));
    }
    assert.equal(body.urls.find((u: { url: string }) => u.url === 'dds://imu').count, 40);
  });

  test('a window and a url filter narrow the pass; listed urls without messages get zeros', async () => {
    const { status, body } = await getJson(
      '/v1/bags/drive.vdb/density?buckets=5&begin=100&end=200&urls=dds://imu,nope',
    );
    assert.equal(status, 200);
    assert.equal(body.bucketMs, 20);
    assert.deepEqual(
      body.urls.map((u: { url: string }) => u.url),
      ['dds://imu', 'nope'],
    );
    // Frames at 101, 111, …, 191 ms; imu is every third and sixth of six kinds.
    assert.equal(body.urls[0].count, 4);
    assert.equal(body.total, 4);
    assert.deepEqual(body.urls[1].counts, [0, 0, 0, 0, 0]);
    const again = await getJson('/v1/bags/drive.vdb/density?buckets=5&begin=100&end=200&urls=dds://imu,nope');
    assert.deepEqual(again.body, body);
  });

  test('frames sharing timestamps and an empty window', async () => {
    const same = await getJson('/v1/bags/same-ts.vdb/density?buckets=3');
    assert.equal(same.body.total, 25);
    assert.equal(
      same.body.urls.reduce((n: number, u: { count: number }) => n + u.count, 0),
      25,
    );
    const empty = await getJson('/v1/bags/drive.vdb/density?buckets=4&begin=5000&end=6000');
    assert.equal(empty.status, 200);
    assert.equal(empty.body.total, 0);
    assert.deepEqual(empty.body.urls, []);
  });

  test('bad parameters and bags are 4xx with a code', async () => {
    for (const query of ['buckets=0', 'buckets=5001', 'buckets=abc', 'begin=-1', 'begin=20&end=10']) {
      const { status, body } = await getJson(`/v1/bags/drive.vdb/density?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.error.code, 'INVALID_ARGUMENT');
    }
    assert.equal((await getJson('/v1/bags/missing.vdb/density')).status, 404);
    assert.equal((await getJson('/v1/bags/bad.vdb/density')).status >= 400, true);
    assert.equal((await getJson('/v1/bags/drive.vdb/density', guarded.url)).status, 401);
    const res = await fetch(`${guarded.url}/v1/bags/drive.vdb/density?buckets=2`, {
      headers: { authorization: 'Bearer sesame' },
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { total: number }).total, 120);
  });

  test('is in the OpenAPI document', async () => {
    const { body } = await getJson('/v1/openapi.json');
    assert.ok(body.paths['/v1/bags/{id}/density']?.get);
  });
});
