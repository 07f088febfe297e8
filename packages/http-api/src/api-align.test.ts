import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagReader, BagWriter, SchemaType } from '@vlink/bag';
import { alignChunks } from '@vlink/bag-align';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { type RunningServer, serve } from './index.js';

// GET /v1/bags/{id}/align behind the token: the same bytes as the library, errors as JSON responses.

const START_MS = 1_700_000_000_000;
const root = mkdtempSync(join(tmpdir(), 'vlink-align-api-'));
const TOKEN = 'align-secret';
let server: RunningServer;
const encoder = new TextEncoder();

before(async () => {
  // /cam at 1, 2, 3 ms; /state at 0.9, 1.6, 2.1, 2.9 ms with x = 9, 16, 21, 29
  const writer = await BagWriter.create(join(root, 'ep.vcap'), { maxQueueTimeMs: 0, startTimestamp: START_MS });
  const frames = [
    ...[1000, 2000, 3000].map((t, i) => ['/cam', t, { seq: i + 1 }] as const),
    ...[900, 1600, 2100, 2900].map((t) => ['/state', t, { x: t / 100 }] as const),
  ].sort((a, b) => a[1] - b[1]);
  for (const [url, timestamp, value] of frames) {
    await writer.write({
      timestamp,
      url,
      data: encoder.encode(JSON.stringify(value)),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  server = await serve({ root, port: 0, token: TOKEN });
});
after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const get = (query: string, token = TOKEN) =>
  fetch(`${server.url}/v1/bags/ep.vcap/align?${query}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

const iso = (us: number) =>
  `${new Date(START_MS + Math.floor(us / 1000)).toISOString().slice(0, -1)}${String(us % 1000).padStart(3, '0')}Z`;

describe('GET /v1/bags/{id}/align', () => {
  test('needs the token', async () => {
    const res = await get('base=/cam', '');
    assert.equal(res.status, 401);
    await res.body?.cancel();
  });

  test('CSV: the hand-computed table (linear, tolerance 0.7 ms)', async () => {
    const res = await get('base=/cam&match=/state=linear&tolerance=0.7&format=csv');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(
      await res.text(),
      [
        'time,/cam.seq,/state#time,/state.x',
        `${iso(1000)},1,${iso(1000)},10`,
        `${iso(2000)},2,${iso(2000)},20`,
        `${iso(3000)},3,,`,
        '',
      ].join('\n'),
    );
  });

  test('NDJSON with a fixed rate on publish times and forward fill', async () => {
    const res = await get(
      'base=1000hz&timeBase=publish&match=/state=previous&tolerance=0.5&missing=ffill&format=ndjson',
    );
    assert.equal(res.status, 200);
    const rows = (await res.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // ticks 900, 1900, 2900 µs: 1900 is 300 µs after 1600
    assert.deepEqual(
      rows.map((r) => r['/state.x']),
      [9, 16, 29],
    );
  });

  test('Parquet: the bytes the library writes, the bag named by its id', async () => {
    const res = await get('base=/cam&match=/state=nearest');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.apache.parquet');
    const body = new Uint8Array(await res.arrayBuffer());
    const reader = await BagReader.create(join(root, 'ep.vcap'));
    const parts: Uint8Array[] = [];
    try {
      const options = { base: { url: '/cam' }, match: { '/state': 'nearest' as const }, bagName: 'ep.vcap' };
      for await (const chunk of alignChunks(reader, { ...options, timeBase: 'log', missing: 'null' }, 'parquet')) {
        parts.push(chunk);
      }
    } finally {
      await reader.close();
    }
    assert.deepEqual(body, new Uint8Array(Buffer.concat(parts)));
    assert.equal(new TextDecoder().decode(body.subarray(0, 4)), 'PAR1');
    assert.ok(!new TextDecoder().decode(body).includes(root), 'no server path in the file');
  });

  test('bad input: typed JSON errors', async () => {
    const cases: Array<[string, number, string]> = [
      ['base=/nope', 404, 'NOT_FOUND'],
      ['base=/cam&match=/state=cubic', 400, 'INVALID_ARGUMENT'],
      ['base=/cam&missing=zero', 400, 'INVALID_ARGUMENT'],
      ['base=0hz', 400, 'INVALID_ARGUMENT'],
      ['base=/cam&match=/cam=nearest', 400, 'INVALID_ARGUMENT'],
    ];
    for (const [query, status, code] of cases) {
      const res = await get(query);
      assert.equal(res.status, status, query);
      const body = (await res.json()) as { error: { code: string } };
      assert.equal(body.error.code, code, query);
    }
  });
});
