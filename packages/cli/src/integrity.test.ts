import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType, type Frame, SchemaType } from '@vlink/bag';
import { ndjson, runCli, SLOW, tempDir, writeBag } from './testing/harness.js';

const tmp = tempDir();
after(() => tmp.cleanup());

/** 300 frames of ~18 KiB (two urls, one raw, one RPC): one 4 MiB uncompressed chunk holds about 226 of them. */
function bigFrames(n = 300): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < n; i++) {
    const data = new Uint8Array(18_000 + (i % 7));
    for (let j = 0; j < data.length; j += 97) data[j] = (i + j) & 0xff;
    frames.push({
      timestamp: 1_000 + i * 10_000,
      url: i % 4 === 0 ? '/rpc' : '/lidar',
      data,
      serType: i % 4 === 0 ? 'pb.Req|pb.Resp' : 'raw.Scan',
      schemaType: SchemaType.Raw,
      actionType: i % 4 === 0 ? ActionType.ClientRequest : ActionType.Publish,
    });
  }
  return frames;
}

const original = tmp.path('big.vcap');
const vdb = tmp.path('drive.vdb');
before(async () => {
  await writeBag(original, { frames: bigFrames() });
  await writeBag(vdb, { frames: bigFrames(120) });
});

test('check, fix and reindex without a terminal on stderr: no progress bar or activity line, only the verdict on stdout', async () => {
  for (const [path, frames] of [
    [original, 300],
    [vdb, 120],
  ] as const) {
    const run = await runCli(['check', path]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.equal(run.stdout, `${path}: ok (${frames} frames checked)\n`);
    const out = tmp.path(`quiet-fix-${frames}${path.slice(path.lastIndexOf('.'))}`);
    const fix = await runCli(['fix', path, '--output', out]);
    assert.equal(fix.code, 0, fix.stderr);
    assert.equal(fix.stderr, '');
    assert.match(fix.stdout, new RegExp(`^${path}: fixed: ${frames} frames .* nothing lost into ${out}\n$`));
    const reindex = await runCli(['reindex', out]);
    assert.deepEqual([reindex.code, reindex.stderr, reindex.stdout], [0, '', `${out}: reindexed\n`]);
  }
});

interface JsonReport {
  frames: number;
  lostFrames: number;
  lostBytes: number;
  lossless: boolean;
  backup?: string;
  readableFrames: number;
  urls: Array<{ url: string; recoveredFrames: number; lostFrames: number }>;
}

describe('fix: salvage, report, never destroy', () => {
  test(
    'a .vcap cut inside its first chunk: every complete message kept, the loss reported, exit 1, a backup',
    SLOW,
    async () => {
      const cut = tmp.path('cut.vcap');
      copyFileSync(original, cut);
      truncateSync(cut, 3_000_000);
      const before = readFileSync(cut);
      const r = await runCli(['fix', cut, '--json']);
      assert.equal(r.code, 1, 'something was lost');
      const report = JSON.parse(r.stdout) as JsonReport;
      // 3,000,000 bytes hold 164 whole ~18 KiB messages after the header; the one cut in half is lost.
      assert.ok(report.frames >= 160 && report.frames <= 166, `${report.frames} frames kept`);
      assert.ok(report.frames >= report.readableFrames);
      assert.ok(report.lostBytes > 0);
      assert.equal(report.lossless, false);
      assert.equal(report.backup, `${cut}.bak`);
      assert.deepEqual(readFileSync(`${cut}.bak`), before, 'the original is kept byte for byte');
      const check = await runCli(['check', cut]);
      assert.equal(check.code, 0, check.stdout + check.stderr);
      const info = JSON.parse((await runCli(['info', cut, '--json'])).stdout) as {
        messageCount: number;
        urls: Array<{ url: string; ser: string; type: string }>;
      };
      assert.equal(info.messageCount, report.frames);
      // The type names of the raw and the RPC url came through without their VLinkChannel_* records.
      assert.deepEqual(info.urls.map((u) => [u.url, u.ser, u.type]).sort(), [
        ['/lidar', 'raw.Scan', 'Event'],
        ['/rpc', 'pb.Req|pb.Resp', 'Method'],
      ]);
      const cat = await runCli(['cat', cut]);
      assert.equal(cat.stdout.trim().split('\n').length, report.frames);
    },
  );

  test('--output writes the repaired copy elsewhere and leaves the input as it is', SLOW, async () => {
    const cut = tmp.path('cut2.vcap');
    const out = tmp.path('repaired.vcap');
    copyFileSync(original, cut);
    truncateSync(cut, 5_000_000);
    const before = readFileSync(cut);
    const r = await runCli(['fix', cut, '--output', out]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /fixed: \d+ frames .* recovered, \d+ frames and .* lost into .*repaired\.vcap\n/);
    assert.deepEqual(readFileSync(cut), before);
    assert.ok(!existsSync(`${cut}.bak`));
    assert.equal((await runCli(['check', out])).code, 0);
  });

  test(
    'flipped payload bytes in a .vcap: check and reads refuse them (CRC), fix drops the chunk and says so',
    SLOW,
    async () => {
      const flipped = tmp.path('flipped.vcap');
      const bytes = readFileSync(original);
      for (let i = 0; i < 50; i++) bytes[200_000 + i * 1_001]! ^= 0x20;
      writeFileSync(flipped, bytes);
      const check = await runCli(['check', flipped, '--json']);
      assert.equal(check.code, 1);
      const report = JSON.parse(check.stdout) as { ok: boolean; problems: Array<{ message: string; offset?: number }> };
      assert.equal(report.ok, false);
      assert.ok(report.problems.some((p) => /CRC/.test(p.message) && p.offset !== undefined));
      const cat = await runCli(['cat', flipped]);
      assert.notEqual(cat.code, 0, 'no corrupted frame is returned as good');
      assert.match(cat.stderr, /CRC mismatch/);
      const fixed = await runCli(['fix', flipped, '--json']);
      assert.equal(fixed.code, 1);
      const repair = JSON.parse(fixed.stdout) as JsonReport;
      assert.ok(repair.lostFrames > 0 && repair.frames + repair.lostFrames === 300, JSON.stringify(repair.urls));
      assert.ok(repair.frames >= repair.readableFrames);
    },
  );

  test('a damaged chunk after good ones: cat and info -l write the good frames, then fail', SLOW, async () => {
    // The second (last) chunk holds the frames after the first ~226; its payload bytes lie in the file's last 1.3 MB.
    const flipped = tmp.path('flipped-late.vcap');
    const bytes = readFileSync(original);
    for (let i = 0; i < 50; i++) bytes[bytes.length - 300_000 + i * 1_001]! ^= 0x20;
    writeFileSync(flipped, bytes);
    const whole = ndjson((await runCli(['cat', original])).stdout);
    const cat = await runCli(['cat', flipped]);
    assert.notEqual(cat.code, 0);
    assert.match(cat.stderr, /CRC mismatch/);
    // They were lost in the output buffer before: the error ended the process with the frames still queued.
    const read = ndjson(cat.stdout);
    assert.ok(read.length > 200 && read.length < whole.length, `${read.length} of ${whole.length} frames written`);
    assert.deepEqual(read, whole.slice(0, read.length));
    const list = await runCli(['info', flipped, '-l']);
    assert.notEqual(list.code, 0);
    assert.match(list.stderr, /CRC mismatch/);
    assert.equal(list.stdout.split('\n').filter((line) => /\/(lidar|rpc) /.test(line)).length, read.length);
  });

  for (const [name, cutBy] of [
    ['one byte', 1],
    ['half a page', 8_000],
  ] as const) {
    test(`a .vdb cut by ${name}: fix leaves a file that passes check; no prompt without a terminal`, SLOW, async () => {
      const cut = tmp.path(`cut${cutBy}.vdb`);
      copyFileSync(vdb, cut);
      truncateSync(cut, statSync(cut).size - cutBy);
      const before = await runCli(['check', cut]);
      const r = await runCli(['fix', cut]);
      if (before.code === 0) {
        // The cut took only bytes SQLite never used: nothing to repair.
        assert.match(r.stdout, /ok, nothing to fix/);
        return;
      }
      assert.match(r.stdout, /fixed: \d+ frames/, r.stderr);
      assert.ok(existsSync(`${cut}.bak`), 'a backup although nobody was asked');
      const check = await runCli(['check', cut]);
      assert.equal(check.code, 0, check.stdout + check.stderr);
    });
  }

  test('flipped bytes in .vdb payloads: check decodes every row and names it', SLOW, async () => {
    const damaged = tmp.path('lzav.vdb');
    const writer = tmp.path('lzav-src.vdb');
    // Many small compressible rows: flipped bytes land inside LZAV streams and row headers.
    const small = bigFrames(2000).map((f, i) => {
      const data = new Uint8Array(150 + (i % 50));
      for (let j = 0; j < data.length; j++) data[j] = (i * 31 + (j >> 2)) & 0xff;
      return { ...f, data };
    });
    await writeBag(writer, { frames: small });
    // Rewrite with LZAV so payloads are compression frames.
    const clone = await runCli(['clone', writer, damaged, '-p', 'lzav']);
    assert.equal(clone.code, 0, clone.stderr);
    const bytes = readFileSync(damaged);
    for (let i = 0; i < 200; i++) bytes[Math.floor(bytes.length / 3) + i * 37]! ^= 0x5a;
    writeFileSync(damaged, bytes);
    const [check, cat] = await Promise.all([runCli(['check', damaged, '--json']), runCli(['cat', damaged])]);
    assert.notEqual(cat.code, 0, 'reading fails on the damage');
    assert.equal(check.code, 1, 'and so does check');
    const report = JSON.parse(check.stdout) as { problems: Array<{ message: string; row?: number }> };
    assert.ok(report.problems.length > 0);
  });
});

describe('split manifests that cannot be true', () => {
  for (const bad of ['1e300', '-5']) {
    test(`a count of ${bad}: info counts the segments, check fails, fix rewrites the manifest`, SLOW, async () => {
      const manifest = tmp.path(`absurd${bad}.vdbx`);
      const clone = await runCli(['clone', vdb, manifest, '-z', '0.0005']);
      assert.equal(clone.code, 0, clone.stderr);
      const text = readFileSync(manifest, 'utf8');
      writeFileSync(manifest, text.replace(/"count": 120,/, `"count": ${bad},`));
      const info = JSON.parse((await runCli(['info', manifest, '--json'])).stdout) as {
        messageCount: number;
        hasCompleted: boolean;
      };
      assert.deepEqual([info.messageCount, info.hasCompleted], [120, false]);
      const check = await runCli(['check', manifest]);
      assert.equal(check.code, 1);
      assert.match(check.stdout, /VLinkHeader\.count is .* not a count/);
      const fixed = await runCli(['fix', manifest]);
      assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
      assert.match(readFileSync(manifest, 'utf8'), /"count": 120,/);
      assert.equal((await runCli(['check', manifest])).code, 0);
    });
  }
});
