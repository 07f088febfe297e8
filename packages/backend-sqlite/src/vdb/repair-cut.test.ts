import assert from 'node:assert/strict';
import { copyFileSync, truncateSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, BagWriter, registerBackend, repairBag, SchemaType } from '@vlink/bag-core';
import { sqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { tempDir, withDb } from '../testing/util.js';

// repairBag of a .vdb whose own bookkeeping says more than could be kept (a tester's find: a file cut to 60,000 of
// its 98,304 bytes kept 0 of the 300 rows its header counted, and the report said lostFrames 0, lossless). The loss is
// the header's count minus what was kept, per url where the file can tell; a url whose name is lost is a loss too.

registerBackend(sqliteBackend);
const driver = await loadDriver();
const tmp = tempDir('repair-cut');
after(() => tmp.cleanup());

/** 300 small frames of one url, as the tester's bag: 16 KiB pages, the data on the pages after VLinkUrls. */
async function record(): Promise<string> {
  const path = tmp.path('split.vdb');
  const writer = await BagWriter.create(path, { syncMode: true });
  const encode = (s: string) => new TextEncoder().encode(s);
  for (let i = 0; i < 300; i++)
    writer.push({
      timestamp: i * 100_000,
      url: '/s',
      data: encode(JSON.stringify({ i })),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
  return path;
}

const whole = await record();

function cut(bytes: number): string {
  const path = tmp.path(`cut-${bytes}.vdb`);
  copyFileSync(whole, path);
  truncateSync(path, bytes);
  return path;
}

describe('repairBag of a .vdb cut short', () => {
  for (const bytes of [40_000, 60_000])
    test(`cut to ${bytes} bytes: the 300 rows the header counted are lost, not lossless`, async () => {
      const path = cut(bytes);
      const report = await repairBag(path, { output: `${path}.out.vdb` });
      assert.equal(report.frames, 0);
      assert.equal(report.lostFrames, 300, report.problems.join('\n'));
      assert.equal(report.lossless, false);
      // The cut took the VLinkUrls row of /s: no url made up of zeros is reported in its place.
      assert.deepEqual(
        report.urls.filter((u) => u.recoveredFrames > 0 || u.lostFrames > 0),
        [],
      );
      assert.ok(report.problems.some((p) => p.startsWith('the header counted 300 rows; 0 could be kept')));
    });

  test('cut inside VLinkHeader: the error names the file, not the repair copy', async () => {
    const path = cut(20_000);
    await assert.rejects(repairBag(path, { output: `${path}.out.vdb` }), (error: unknown) => {
      assert.ok(BagError.isInstance(error));
      assert.equal(error.code, 'CORRUPT_FILE');
      assert.equal(error.file, path);
      assert.doesNotMatch(error.message, /\.repair-[0-9a-f]{8}/);
      return true;
    });
  });

  test('a cut through the data pages: the loss is the url’s, from what VLinkUrls and the header counted', async () => {
    // The rows are on the fifth page (65,536 to 81,920), the first ones at its end: the cut takes about half.
    const path = cut(80_000);
    const report = await repairBag(path, { output: `${path}.out.vdb` });
    assert.ok(report.frames > 0 && report.frames < 300, `${report.frames} frames kept`);
    assert.equal(report.lostFrames, 300 - report.frames);
    assert.deepEqual(
      report.urls.map((u) => [u.url, u.recoveredFrames, u.lostFrames]),
      [['/s', report.frames, 300 - report.frames]],
    );
    assert.equal(report.lossless, false);
  });
});

describe('repairBag of a .vdb that lost a url name', () => {
  test('every frame kept under a placeholder url: the lost name makes it not lossless', async () => {
    const path = tmp.path('nameless.vdb');
    copyFileSync(whole, path);
    withDb(driver, path, (db) => db.exec("UPDATE VLinkUrls SET url = '' WHERE url = '/s';"));
    const report = await repairBag(path, { output: `${path}.out.vdb` });
    assert.equal(report.frames, 300);
    assert.equal(report.lostFrames, 0);
    assert.equal(report.lossless, false);
    assert.equal(report.lostMetadata.length, 1, report.lostMetadata.join('\n'));
    assert.match(report.lostMetadata[0]!, /the name of url id \d+ \(kept as \/vlink-bag\/unnamed-url-\d+\)/);
  });

  test('a sound file repaired is lossless', async () => {
    const path = tmp.path('sound.vdb');
    copyFileSync(whole, path);
    const report = await repairBag(path, { output: `${path}.out.vdb` });
    assert.deepEqual([report.frames, report.lostFrames, report.lostMetadata, report.lossless], [300, 0, [], true]);
  });
});
