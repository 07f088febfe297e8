import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagReader, BagWriter, repairBag, SchemaType } from './index.js';

// What repairBag reports lost for a split recording whose manifest lists a segment the repair cannot bring back: the
// frames the manifest counted for it (it said "0 frames and 0B lost" while the manifest recorded them).
const dir = mkdtempSync(join(tmpdir(), 'vlink-repair-split-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** 60 frames of two urls (one RPC), 10 ms apart, split every 200 ms: segments of 21, 20 and 19 frames. */
async function record(path: string): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, splitByTime: 200 });
  for (let i = 0; i < 60; i++)
    writer.push({
      timestamp: i * 10_000,
      url: i % 2 ? '/a' : '/rpc',
      data: new Uint8Array(10 + (i % 2)).fill(i),
      serType: i % 2 ? 'raw' : 'pb.Req|pb.Resp',
      schemaType: SchemaType.Raw,
      actionType: i % 2 ? ActionType.Publish : ActionType.ClientRequest,
    });
  await writer.close();
}

const lostOf = (urls: Array<{ url: string; lostFrames: number; lostBytes: number }>) =>
  Object.fromEntries(urls.filter((u) => u.lostFrames > 0).map((u) => [u.url, [u.lostFrames, u.lostBytes]]));

describe('repairBag of a split recording', () => {
  for (const ext of ['.vdbx', '.vcapx']) {
    const seg = ext === '.vdbx' ? '.vdb' : '.vcap';

    test(`${ext}: a whole recording repairs with nothing lost`, async () => {
      const path = join(dir, `whole${ext}`);
      await record(path);
      const report = await repairBag(path, { backup: false });
      assert.deepEqual([report.frames, report.lostFrames, report.lostBytes, report.lossless], [60, 0, 0, true]);
    });

    test(`${ext}: a listed segment that is missing is lost as the manifest counted it`, async () => {
      const path = join(dir, `missing${ext}`);
      await record(path);
      rmSync(join(dir, `missing.2${seg}`));
      const report = await repairBag(path, { output: join(dir, `missing-fixed${ext}`) });
      assert.equal(report.frames, 40);
      assert.equal(report.lostFrames, 20);
      assert.equal(report.lostBytes, 10 * 10 + 10 * 11);
      assert.equal(report.lossless, false);
      assert.deepEqual(lostOf(report.urls), { '/a': [10, 110], '/rpc': [10, 100] });
      assert.ok(report.problems.includes(`segment missing.2${seg} is missing`));
    });

    test(`${ext}: a segment file copied over another is left out, read and repaired, and its own frames are lost`, async () => {
      // Found by hand: read with tryToFix, the copy gave segment 1's 21 frames twice; fix() kept them all, said nothing
      // was lost, and the repaired recording passed check.
      const path = join(dir, `copied${ext}`);
      await record(path);
      copyFileSync(join(dir, `copied.1${seg}`), join(dir, `copied.2${seg}`));
      // Strict: the segment is held against the manifest when a read reaches it.
      const strict = await BagReader.create(path);
      try {
        await assert.rejects(async () => {
          for await (const _ of strict.frames()) void _;
        }, /segment "copied\.2\.v(db|cap)" is not what the manifest says/);
      } finally {
        await strict.close();
      }
      const reader = await BagReader.create(path, { tryToFix: true });
      try {
        const times: number[] = [];
        for await (const f of reader.frames()) times.push(f.timestamp);
        assert.equal(times.length, 40, 'segments 1 and 3');
        assert.equal(new Set(times).size, 40, 'no frame twice');
        const report = await reader.verify({ quick: true });
        assert.ok(
          report.problems.some(
            (p) =>
              p.message ===
              `segment "copied.2${seg}" repeats "copied.1${seg}" (its start, duration and count): skipped`,
          ),
          JSON.stringify(report.problems),
        );
      } finally {
        await reader.close();
      }
      const out = join(dir, `copied-fixed${ext}`);
      const report = await repairBag(path, { output: out });
      assert.deepEqual([report.frames, report.lostFrames, report.lossless], [40, 20, false]);
      assert.ok(
        report.problems.includes(
          `segment copied.2${seg} repeats copied.1${seg} (its start, duration and count): left out`,
        ),
        report.problems.join('\n'),
      );
      const fixed = await BagReader.create(out);
      try {
        assert.equal(await fixed.check(), true);
        const times: number[] = [];
        for await (const f of fixed.frames()) times.push(f.timestamp);
        assert.equal(new Set(times).size, 40);
        assert.equal(times.length, 40);
      } finally {
        await fixed.close();
      }
    });

    test(`${ext}: without what each segment holds (a VLink manifest), its totals say what is lost`, async () => {
      const path = join(dir, `vlink${ext}`);
      await record(path);
      const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      delete manifest['VLinkBagSegments'];
      writeFileSync(path, JSON.stringify(manifest, null, 4));
      rmSync(join(dir, `vlink.3${seg}`));
      const report = await repairBag(path, { output: join(dir, `vlink-fixed${ext}`) });
      assert.deepEqual([report.frames, report.lostFrames, report.lostBytes, report.lossless], [41, 19, 200, false]);
      assert.deepEqual(lostOf(report.urls), { '/a': [10, 110], '/rpc': [9, 90] });
    });
  }
});
