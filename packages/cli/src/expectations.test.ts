import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { McapIndexedReader } from '@mcap/core';
import { after, describe, test } from '@vlink/fixtures/test';
import { actionText } from '@vlink/bag';
import { loadDriver } from '@vlink/bag-sqlite';
import { CLI, CLI_RUNTIME, fixtureFrames, runCli, START_MS, SLOW, tempDir } from './testing/harness.js';

// What the CLI writes, checked against what the test gave it and read by code that is not ours: the runtime's SQLite
// driver with plain SQL for .vdb, and @mcap/core's McapIndexedReader (the official reader) for .vcap.
const tmp = tempDir();
after(() => tmp.cleanup());
const frames = fixtureFrames();
// The NDJSON input, built here from the frames (not from `cat`), in the documented shape.
const input = `${frames
  .map((f) =>
    JSON.stringify({
      timestamp: f.timestamp,
      url: f.url,
      action: actionText(f.actionType),
      serType: f.serType,
      schemaType: f.schemaType,
      size: f.data.byteLength,
      data: Buffer.from(f.data).toString('base64'),
    }),
  )
  .join('\n')}\n`;
const meta = `${JSON.stringify({ meta: { startTimestamp: START_MS, tagName: 'expect' } })}\n`;

describe(`the CLI under ${CLI_RUNTIME}`, () => {
  test('runs under the runtime of this test run (Bun and Deno runs do not re-test the Node CLI)', () => {
    const expected = process.versions.bun ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';
    assert.equal(CLI_RUNTIME, process.env['VLINK_CLI_RUNTIME'] ?? expected);
    const printed = spawnSync(CLI[0], ['--version'], { encoding: 'utf8' }).stdout;
    const version = { node: process.versions.node, bun: process.versions.bun, deno: process.versions['deno'] }[
      CLI_RUNTIME
    ];
    if (CLI_RUNTIME === expected) assert.ok(version && printed.includes(version), `${CLI[0]} --version: ${printed}`);
  });

  test('record --stdin into .vdb: the rows (plain SQL) hold exactly the frames given', SLOW, async () => {
    const out = tmp.path('given.vdb');
    const rec = await runCli(['record', '--stdin', out, '-q'], { input: meta + input });
    assert.equal(rec.code, 0, rec.stderr);
    const db = (await loadDriver()).open(out, { readOnly: true });
    try {
      const rows = db
        .prepare(
          'SELECT d.elapsed AS elapsed, u.url AS url, d.action AS action, d.data AS data FROM VLinkDatas d JOIN VLinkUrls u ON u.id = d.url ORDER BY d.rowid',
        )
        .all();
      assert.equal(rows.length, frames.length);
      rows.forEach((row, i) => {
        const f = frames[i]!;
        assert.equal(Number(row['elapsed']), f.timestamp, `row ${i} elapsed`);
        assert.equal(row['url'], f.url, `row ${i} url`);
        assert.equal(row['action'], actionText(f.actionType), `row ${i} action`);
        assert.deepEqual(new Uint8Array(row['data'] as Uint8Array), f.data, `row ${i} data`);
      });
      const [header] = db.prepare('SELECT count, start_timestamp, tag FROM VLinkHeader').all();
      assert.deepEqual(
        [Number(header!['count']), Number(header!['start_timestamp']), header!['tag']],
        [frames.length, START_MS, 'expect'],
      );
    } finally {
      db.close();
    }
  });

  test('record --stdin into .vcap: @mcap/core reads exactly the frames given', SLOW, async () => {
    const out = tmp.path('given.vcap');
    const rec = await runCli(['record', '--stdin', out, '-q'], { input: meta + input });
    assert.equal(rec.code, 0, rec.stderr);
    const bytes = new Uint8Array(readFileSync(out));
    const reader = await McapIndexedReader.Initialize({
      readable: {
        size: async () => BigInt(bytes.length),
        read: async (offset: bigint, length: bigint) => bytes.slice(Number(offset), Number(offset + length)),
      },
    });
    const topics = new Map([...reader.channelsById].map(([id, c]) => [id, c.topic]));
    let i = 0;
    for await (const m of reader.readMessages()) {
      const f = frames[i]!;
      assert.equal(topics.get(m.channelId), f.url, `message ${i} topic`);
      assert.equal(m.logTime, BigInt(START_MS) * 1_000_000n + BigInt(f.timestamp) * 1000n, `message ${i} log time`);
      assert.deepEqual(new Uint8Array(m.data), f.data, `message ${i} data`);
      i++;
    }
    assert.equal(i, frames.length);
  });
});
