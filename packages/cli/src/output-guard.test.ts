import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@vlink/fixtures/test';
import { runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

// A split output (`.vdbx`, `.vcapx`) is more files than its manifest: the segments an old manifest at its path lists
// (which the writer deletes when it starts) and the files at its segments' names (which it writes over). Neither may
// be an input of the command, even with -f, and without -f none of them is overwritten.

const { tmp, vdb, vcap } = sampleBags();
let dirs = 0;
const freshDir = (): string => {
  const dir = tmp.path(`guard-${dirs++}`);
  mkdirSync(dir);
  return dir;
};
const TIME_NAMED = /^\d{4}-\d\d-\d\d_[\d-]+(\.\d+)?\.vdb$/;
const timeNamed = (dir: string) =>
  readdirSync(dir)
    .filter((name) => TIME_NAMED.test(name))
    .sort();
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function ok(args: string[], input?: string): Promise<void> {
  const r = await runCli(args, input === undefined ? {} : { input });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
}

describe('a split output never deletes its inputs', () => {
  test('clone and merge -f onto a manifest that lists their inputs: refused, the inputs kept', SLOW, async () => {
    const dir = freshDir();
    const manifest = join(dir, 'rec.vdbx');
    await ok(['clone', vdb, manifest, '-y', '0.5', '-o', '-q']);
    const segments = timeNamed(dir);
    assert.ok(segments.length >= 3, segments.join(' '));
    const before = segments.map((name) => readFileSync(join(dir, name)));
    // Re-packing one segment, then all of them, into the manifest that lists them.
    const clone = await runCli(['clone', join(dir, segments[0]!), manifest, '-f']);
    const merge = await runCli(['merge', ...segments.map((n) => join(dir, n)), '-o', manifest, '-f', '-q']);
    for (const r of [clone, merge]) {
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `: refusing to overwrite the source bag: the existing rec\\.vdbx lists ${esc(segments[0]!)}, which writing rec\\.vdbx would delete; write to another name\n$`,
        ),
      );
    }
    assert.deepEqual(timeNamed(dir), segments);
    for (const [i, name] of segments.entries()) assert.deepEqual(readFileSync(join(dir, name)), before[i], name);
    assert.equal((await runCli(['check', manifest])).code, 0, 'the recording is whole');
  });

  test('a hand-made manifest listing the source: clone -f refuses instead of deleting it', SLOW, async () => {
    const dir = freshDir();
    const src = join(dir, 'src.vdb');
    copyFileSync(vdb, src);
    const dst = join(dir, 'dst.vdbx');
    writeFileSync(dst, JSON.stringify({ VLinkHeader: { complete: true }, VLinkUrls: [], VLinkFiles: ['src.vdb'] }));
    const r = await runCli(['clone', src, dst, '-f']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refusing to overwrite the source bag: the existing dst\.vdbx lists src\.vdb, /);
    assert.deepEqual(readFileSync(src), readFileSync(vdb));
  });
});

describe('a split output overwrites nothing without -f', () => {
  test('a file at a numbered segment name: clone, merge, record and fix -O refuse before writing', SLOW, async () => {
    const dir = freshDir();
    const unrelated = join(dir, 'drive.1.vdb');
    copyFileSync(vdb, unrelated);
    const splitSource = join(freshDir(), 'split.vdbx');
    await ok(['clone', vdb, splitSource, '-y', '0.5', '-q']);
    const out = join(dir, 'drive.vdbx');
    const ndjson = (await runCli(['cat', vdb])).stdout;
    const runs = [
      await runCli(['clone', vdb, out]),
      await runCli(['merge', vdb, vcap, '-o', out]),
      await runCli(['record', '--stdin', out, '-q'], { input: ndjson }),
      await runCli(['fix', splitSource, '-O', out]),
    ];
    for (const r of runs) {
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /drive\.vdbx: drive\.1\.vdb exists and a segment of it would overwrite it \(pass -f\/--force to overwrite\)\n$/,
      );
    }
    assert.deepEqual(readdirSync(dir), ['drive.1.vdb'], 'nothing written');
    assert.deepEqual(readFileSync(unrelated), readFileSync(vdb));
    // -f: the user asked for it.
    await ok(['clone', vdb, out, '-f', '-y', '0.5', '-q']);
    assert.equal((await runCli(['check', out])).code, 0);
  });

  test('--split-name-by-time: a segment name already taken stops the copy there; -f overwrites', SLOW, async () => {
    // Two url subsets of one recording into one folder: their time names are the same.
    const dir = freshDir();
    const [a, b] = [join(dir, 'a.vdbx'), join(dir, 'b.vdbx')];
    await ok(['clone', vdb, a, '-u', '/camera', '-y', '0.5', '-o', '-q']);
    const first = timeNamed(dir);
    const bytes = first.map((name) => readFileSync(join(dir, name)));
    const second = await runCli(['clone', vdb, b, '-u', '/imu', '-y', '0.5', '-o', '-q']);
    assert.equal(second.code, 1);
    assert.match(
      second.stderr,
      new RegExp(
        `${esc(first[0]!)}: a file already exists where the next segment would be written; it is not overwritten; pass -f/--force to overwrite it\n$`,
      ),
    );
    assert.ok(!existsSync(b));
    for (const [i, name] of first.entries()) assert.deepEqual(readFileSync(join(dir, name)), bytes[i], name);
    assert.equal((await runCli(['check', a])).code, 0, 'the first copy is whole');

    // A name taken further on: the copy stops at that split, and what it wrote is removed.
    const whole = freshDir();
    await ok(['clone', vdb, join(whole, 'c.vdbx'), '-y', '0.5', '-o', '-q']);
    const names = timeNamed(whole);
    const later = freshDir();
    writeFileSync(join(later, names[1]!), 'not a bag');
    const partial = await runCli(['clone', vdb, join(later, 'c.vdbx'), '-y', '0.5', '-o', '-q']);
    assert.equal(partial.code, 1);
    assert.match(
      partial.stderr,
      /it is not overwritten .*; the partial output .*c\.vdbx was removed \(pass -f\/--force to overwrite that file\)\n$/,
    );
    assert.deepEqual(readdirSync(later), [names[1]!]);
    assert.equal(readFileSync(join(later, names[1]!), 'utf8'), 'not a bag');
    await ok(['clone', vdb, join(later, 'c.vdbx'), '-y', '0.5', '-o', '-q', '-f']);
    assert.equal((await runCli(['check', join(later, 'c.vdbx')])).code, 0);
  });
});
