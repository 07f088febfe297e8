import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, test } from '@vlink/fixtures/test';
import { fixturePath } from '@vlink/fixtures';
import { ActionType, BagReader, BagWriter, SchemaType } from '@vlink/bag';
import { CLI, cliEnv, runCli, SLOW, START_MS } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

// A copy (clone, merge, split) that cannot copy everything must not leave a bag that passes for a complete copy:
// one that fails part-way removes what it wrote, and an interrupted split recording whose last segment its manifest
// does not list is refused (with the frames it would leave out counted) unless --try-to-fix reads that segment too.

const { tmp, vdb } = sampleBags();
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a copy that fails part-way leaves no complete-looking output', () => {
  const damaged = tmp.path('damaged.vcap');
  before(async () => {
    // 2000 frames in small chunks; bytes flipped in the middle one fail its CRC when the copy reaches it.
    const writer = await BagWriter.create(damaged, { syncMode: true, cacheSize: 16 * 1024, startTimestamp: START_MS });
    for (let i = 0; i < 2000; i++)
      writer.push({
        timestamp: i * 1000,
        url: i % 2 ? '/a' : '/b',
        data: new Uint8Array(40).fill(i & 0xff),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    await writer.close();
    const bytes = readFileSync(damaged);
    for (let i = 0; i < 64; i++) bytes[Math.floor(bytes.length / 2) + i]! ^= 0x5a;
    writeFileSync(damaged, bytes);
  });

  test('a read error mid-copy: exit 1, the partial .vdb, .vcap or .vdbx removed and said so', SLOW, async () => {
    const dir = tmp.path('partial');
    mkdirSync(dir);
    for (const ext of ['.vdb', '.vcap', '.vdbx']) {
      const out = join(dir, `out${ext}`);
      const r = await runCli(['clone', damaged, out, '-q', ...(ext === '.vdbx' ? ['-y', '0.3'] : [])]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(`: chunk CRC mismatch .*; the partial output ${esc(out)} was removed\n$`),
        r.stderr,
      );
    }
    assert.deepEqual(readdirSync(dir), [], 'no file, sidecar or segment left');
  });

  test('refused at schema time: the empty output is removed', SLOW, async () => {
    const out = tmp.path('same-name.vcap');
    const r = await runCli(['clone', fixturePath('foreign', 'mcap', 'same-name.mcap'), out, '-q']);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /was already pushed with other content; the partial output .*same-name\.vcap was removed\n$/,
    );
    assert.ok(!existsSync(out) && !existsSync(`${out}.json`));
  });
});

describe('an interrupted split recording', () => {
  const dir = tmp.path('crashed');
  const crashed = join(dir, 'rec.vdbx');
  let listed = 0;
  let committed = 0;
  before(async () => {
    mkdirSync(dir);
    const script = fileURLToPath(new URL('./testing/crashed-recording.js', import.meta.url));
    const child = spawn(CLI[0], [...CLI[1].slice(0, -1), script, crashed, '{"splitBySize":100000}'], {
      env: cliEnv(),
      stdio: 'ignore',
    });
    const signal = await new Promise((resolve) => child.on('close', (_code, sig) => resolve(sig)));
    assert.equal(signal, 'SIGKILL', 'the recorder died before closing the manifest');
    for (const tryToFix of [false, true]) {
      const reader = await BagReader.create(crashed, { tryToFix });
      if (tryToFix) committed = reader.getInfo().messageCount;
      else listed = reader.getInfo().messageCount;
      reader.close();
    }
    assert.ok(listed > 0 && committed > listed, `${listed} listed, ${committed} committed`);
  });

  test('clone and merge refuse it, saying how many committed frames would be left out', SLOW, async () => {
    const out = join(dir, 'copy.vdb');
    const clone = await runCli(['clone', crashed, out]);
    const merge = await runCli(['merge', crashed, vdb, '-o', out, '--check-gap', '1000000000']);
    for (const r of [clone, merge]) {
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `${esc(crashed)}: an interrupted recording: ${committed - listed} committed frames in segments? rec\\.\\d+\\.vdb.*, which its manifest does not list, would not be copied; pass --try-to-fix to copy them too, or run vlink-bag fix on it first\n$`,
        ),
      );
    }
    assert.ok(!existsSync(out), 'nothing written');
  });

  test('--try-to-fix copies every committed frame (clone and merge)', SLOW, async () => {
    const out = join(dir, 'fixed-copy.vdb');
    const clone = await runCli(['clone', '--try-to-fix', crashed, out, '-q']);
    assert.equal(clone.code, 0, clone.stderr);
    const merged = join(dir, 'fixed-merge.vdb');
    const merge = await runCli([
      'merge',
      '--try-to-fix',
      crashed,
      vdb,
      '-o',
      merged,
      '--check-gap',
      '1000000000',
      '-q',
    ]);
    assert.equal(merge.code, 0, merge.stderr);
    const count = async (path: string) =>
      (JSON.parse((await runCli(['info', path, '--json'])).stdout) as { messageCount: number }).messageCount;
    assert.equal(await count(out), committed);
    assert.equal(await count(merged), committed + 200);
  });
});
