import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { START_MS } from './testing/fixtures.js';
import { serveFixtureRoot } from './testing/fixture-server.js';

// The bag-level routes (health, list, info, schemas, timing, report, the OpenAPI document); the messages routes are
// in api-messages.test.ts.
const { get, getJson } = serveFixtureRoot();

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
