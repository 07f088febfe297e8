import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, repairBag, SchemaType } from './index.js';

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
