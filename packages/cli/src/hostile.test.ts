import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import { sampleFrames } from '@vlink/bag-core/testing';
import { loadDriver } from '@vlink/bag-sqlite';
import { runCli, SLOW, tempDir, writeBag } from './testing/harness.js';

// Bags planted to hang or trick the CLI (issue 21): each command must refuse them with one line, promptly.
const tmp = tempDir();
const fifo = { vdb: tmp.path('fifo.vdb'), vcap: tmp.path('fifo.vcap') };
let hasFifo = false;

before(async () => {
  hasFifo = spawnSync('mkfifo', [fifo.vdb]).status === 0 && spawnSync('mkfifo', [fifo.vcap]).status === 0;
  await writeBag(tmp.path('view.vdb'));
  const driver = await loadDriver();
  const db = driver.open(tmp.path('view.vdb'));
  try {
    db.exec(`ALTER TABLE VLinkHeader RENAME TO H0;
      CREATE VIEW VLinkHeader AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
        SELECT H0.* FROM H0, r WHERE r.n < 0;`);
  } finally {
    db.close();
  }
  const writer = await BagWriter.create(tmp.path('split.vdbx'), { syncMode: true, splitBySize: 4096 });
  for (const frame of sampleFrames(120)) writer.push({ ...frame });
  await writer.close();
  renameSync(tmp.path('split.2.vdb'), tmp.path('split.2.vdb.orig'));
  if (hasFifo) spawnSync('mkfifo', [tmp.path('split.2.vdb')]);
  const deep = await BagWriter.create(tmp.path('deep.vdb'), { syncMode: true });
  for (const [timestamp, text] of [
    [1_000, `${'['.repeat(8000)}${']'.repeat(8000)}`],
    [2_000, '{"ok":true}'],
  ] as const)
    deep.push({
      timestamp,
      url: 'json/deep',
      data: new TextEncoder().encode(text),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await deep.close();
});
after(() => tmp.cleanup());

/** A command that would hang is killed after this long and fails the test (instead of hanging the suite). */
const PROMPT = { timeoutMs: 20_000 };

describe('hostile inputs', () => {
  test('a FIFO named like a bag is refused by every reading command, at once', SLOW, async (t) => {
    if (!hasFifo) return t.skip('mkfifo is missing');
    for (const path of [fifo.vdb, fifo.vcap]) {
      for (const args of [
        ['info', path],
        ['cat', path],
        ['check', path],
      ]) {
        const result = await runCli(args, PROMPT);
        assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, /is not a regular file \(a FIFO, device or socket\): refused/);
      }
    }
  });

  test('a FIFO as a split segment is refused', SLOW, async (t) => {
    if (!hasFifo) return t.skip('mkfifo is missing');
    const result = await runCli(['info', tmp.path('split.vdbx')], PROMPT);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /FIFO, not a regular file: refused/);
  });

  test('a .vdb whose header is an endless recursive view: CORRUPT_FILE, not a hang', SLOW, async () => {
    const result = await runCli(['info', tmp.path('view.vdb')], PROMPT);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /defines the view "VLinkHeader"; refused/);
  });

  test('cat --decode of JSON nested 8000 levels deep leaves that payload undecoded and goes on', SLOW, async () => {
    const result = await runCli(['cat', tmp.path('deep.vdb'), '--decode'], PROMPT);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /"decoded":null/);
    assert.match(lines[1]!, /"decoded":\{"ok":true\}/);
  });

  test('serve --cors without a token or --allow-origin is refused', SLOW, async () => {
    const result = await runCli(['serve', tmp.dir, '--port', '0', '--cors'], PROMPT);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /cors: true without a token would let any web page read every bag/);
  });
});
