import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { Info, UrlMeta } from '../model/info.js';
import { SchemaType } from '../model/schema-type.js';
import { parseManifest } from './manifest-parse.js';
import { addRecoveredTotals, repairedManifestText, unlistedSegmentNames } from './segment-recovery.js';

/** A url of a recovered segment's info: url `a`, raw, nothing counted, unless `over` says otherwise. */
const url = (over: Partial<UrlMeta>): UrlMeta => ({
  index: 0,
  url: 'a',
  type: 'Event',
  ser: 'raw',
  schemaType: SchemaType.Raw,
  count: 0,
  size: 0,
  loss: 0,
  freq: 0,
  ...over,
});
/** The part of a segment reader's Info that recovery reads. */
const info = (messageCount: number, totalDuration: number, urls: UrlMeta[]) =>
  ({ messageCount, totalDuration, urls }) as unknown as Info;

describe('unlistedSegmentNames', () => {
  test('index names continue the listed sequence without a gap', () => {
    const dir = [
      'drive.vdbx',
      'drive.1.vdb',
      'drive.2.vdb',
      'drive.3.vdb',
      'drive.4.vdb',
      'drive.6.vdb',
      'other.3.vdb',
      'drive.3.vcap',
      'drive.3.vdb-journal',
    ];
    assert.deepEqual(unlistedSegmentNames(dir, 'drive.vdbx', '.vdb', ['drive.1.vdb', 'drive.2.vdb']), [
      'drive.3.vdb',
      'drive.4.vdb',
    ]);
    assert.deepEqual(unlistedSegmentNames(dir, 'drive.vdbx', '.vdb', []), [
      'drive.1.vdb',
      'drive.2.vdb',
      'drive.3.vdb',
      'drive.4.vdb',
    ]);
    assert.deepEqual(unlistedSegmentNames(['drive.01.vdb', 'drive.0.vdb'], 'drive.vdbx', '.vdb', []), []);
  });

  test('time names sort after the last listed one, repeats of a millisecond by their suffix', () => {
    const dir = [
      '2026-03-17_10-00-00-123.vcap',
      '2026-03-17_10-00-05-000.vcap',
      '2026-03-17_10-00-05-000.3.vcap',
      '2026-03-17_09-59-59-999.vcap',
      'x.vcap',
    ];
    assert.deepEqual(unlistedSegmentNames(dir, 'drive.vcapx', '.vcap', ['2026-03-17_10-00-00-123.vcap']), [
      '2026-03-17_10-00-05-000.vcap',
      '2026-03-17_10-00-05-000.3.vcap',
    ]);
    // Nothing listed: every time name, oldest first (the caller's start-timestamp check rejects strangers).
    assert.equal(unlistedSegmentNames(dir, 'drive.vcapx', '.vcap', [])[0], '2026-03-17_09-59-59-999.vcap');
  });
});

describe('recovered totals and the repaired manifest', () => {
  const text = JSON.stringify({
    VLinkHeader: { major: 2, count: 10, duration: 9_000_000, complete: false, start_timestamp: 5 },
    VLinkUrls: [
      { index: 0, url: 'a', type: 'Event', ser: 'raw', encoding: 'Raw', count: 10, size: 100, loss: 0.5, freq: 1.0 },
    ],
    VLinkFiles: ['d.1.vdb'],
  });

  test('counts add up, new urls get a free index, rates combine over both spans', () => {
    const manifest = parseManifest(text, 'd.vdbx', 'vdbx');
    const totals = addRecoveredTotals(
      manifest,
      [
        {
          name: 'd.2.vdb',
          offsetUs: 0,
          info: info(7, 15_000, [
            url({ count: 5, size: 50, freq: 1.0 }),
            url({ index: 0, url: 'b', count: 2, size: 8 }),
          ]),
        },
      ],
      'vdbx',
    );
    assert.equal(totals.count, 17);
    assert.equal(totals.duration, 15_000_000);
    assert.deepEqual(
      totals.urls.map((u) => [u.index, u.url, u.count, u.size]),
      [
        [0, 'a', 15, 150],
        [1, 'b', 2, 8],
      ],
    );
    assert.equal(totals.urls[0]!.freq, 15 / 15);
    assert.equal(totals.urls[0]!.loss, 0.5);

    const repaired = JSON.parse(repairedManifestText(text, 'd.vdbx', totals, ['d.2.vdb'], 'vdbx'));
    assert.deepEqual(repaired.VLinkFiles, ['d.1.vdb', 'd.2.vdb']);
    assert.deepEqual(repaired.VLinkHeader, {
      major: 2,
      count: 17,
      duration: 15_000_000,
      complete: true,
      start_timestamp: 5,
    });
    assert.deepEqual(Object.keys(repaired.VLinkUrls[0]), [
      'index',
      'url',
      'type',
      'ser',
      'encoding',
      'count',
      'size',
      'loss',
      'freq',
    ]);
  });

  test('.vcapx keys urls by url and action', () => {
    const manifest = parseManifest(text.replace('"type":"Event"', '"type":"Event","action":"Pub"'), 'd.vcapx', 'vcapx');
    const totals = addRecoveredTotals(
      manifest,
      [
        {
          name: 'x',
          offsetUs: 2_000_000,
          info: info(3, 1_000, [url({ action: 'Pub', count: 1 }), url({ action: 'Sub', count: 2 })]),
        },
      ],
      'vcapx',
    );
    assert.deepEqual(
      totals.urls.map((u) => [u.index, u.action, u.count]),
      [
        [0, 'Pub', 11],
        [1, 'Sub', 2],
      ],
    );
    assert.equal(totals.duration, 9_000_000);
  });
});

// The rules below were left unpinned by the first mutation run (bench/results/mutation.md): each test names the
// behaviour a mutant of segment-recovery.ts broke without any test failing.
describe('unlistedSegmentNames: which listed names set the naming scheme', () => {
  test('a listed index is a number without leading zero, sign or suffix, read in full', () => {
    // `drive.12` is index 12, so recovery continues at 13 (not at 2, and not by time).
    assert.deepEqual(unlistedSegmentNames(['drive.12.vdb', 'drive.13.vdb'], 'drive.vdbx', '.vdb', ['drive.12.vdb']), [
      'drive.13.vdb',
    ]);
    // `drive.01`, `drive.1x` and a tenth digit are no index names: the listing is then not by index, and `drive.2` is not taken.
    for (const odd of ['drive.01.vdb', 'drive.1x.vdb', 'drive.1234567890.vdb'])
      assert.deepEqual(
        unlistedSegmentNames([odd, 'drive.2.vdb', 'drive.1234567891.vdb'], 'drive.vdbx', '.vdb', [odd]),
        [],
        odd,
      );
  });

  test("segments are the manifest's own: another stem's index names do not set the scheme", () => {
    // A manifest `drive.vdbx` listing `other.1.vdb` (renamed after recording): `drive.2.vdb` is no continuation.
    assert.deepEqual(unlistedSegmentNames(['other.1.vdb', 'drive.2.vdb'], 'drive.vdbx', '.vdb', ['other.1.vdb']), []);
  });

  test('one listed index name is enough to continue by index', () => {
    const listed = ['drive.1.vdb', '2026-03-17_10-00-00-123.vdb'];
    assert.deepEqual(
      unlistedSegmentNames([...listed, 'drive.2.vdb', '2026-03-17_10-00-05-000.vdb'], 'drive.vdbx', '.vdb', listed),
      ['drive.2.vdb'],
    );
  });

  test('one listed time name is enough to continue by time', () => {
    const listed = ['2026-03-17_10-00-00-123.vdb', 'drive.x.vdb'];
    assert.deepEqual(unlistedSegmentNames([...listed, '2026-03-17_10-00-05-000.vdb'], 'drive.vdbx', '.vdb', listed), [
      '2026-03-17_10-00-05-000.vdb',
    ]);
  });

  test('a time name with another extension is never a segment', () => {
    // Cutting `.vdb`'s four characters off `….2.tmp` would leave a valid time name with a repeat suffix.
    assert.deepEqual(
      unlistedSegmentNames(['2026-03-17_10-00-05-000.2.tmp'], 'drive.vdbx', '.vdb', ['2026-03-17_10-00-00-123.vdb']),
      [],
    );
  });
});

describe('addRecoveredTotals: edge cases of the totals', () => {
  const manifestOf = (urls: object[]) =>
    parseManifest(
      JSON.stringify({ VLinkHeader: { count: 10, duration: 9_000_000 }, VLinkUrls: urls, VLinkFiles: ['d.1.vdb'] }),
      'd.vdbx',
      'vdbx',
    );
  const a = { index: 0, url: 'a', type: 'Event', ser: 'raw', encoding: 'Raw', count: 10, size: 100, freq: 2.0 };

  test('an empty recovered segment adds nothing, not even its (meaningless) end time', () => {
    const totals = addRecoveredTotals(
      manifestOf([a]),
      [{ name: 'd.2.vdb', offsetUs: 60_000_000, info: info(0, 0, [url({ url: 'c', index: 3 })]) }],
      'vdbx',
    );
    assert.deepEqual([totals.count, totals.duration], [10, 9_000_000]);
    assert.deepEqual(
      totals.urls.map((u) => u.url),
      ['a'],
      'a url without messages in the segment is not added',
    );
  });

  test("a url's rate is its count over the sum of both spans (span = count / rate)", () => {
    // Listed: 10 messages at 2 Hz = 5 s; recovered: 4 at 4 Hz = 1 s; together 14 over 6 s.
    const totals = addRecoveredTotals(
      manifestOf([a]),
      [{ name: 'd.2.vdb', offsetUs: 0, info: info(4, 1_000, [url({ count: 4, size: 40, freq: 4 })]) }],
      'vdbx',
    );
    assert.equal(totals.urls[0]!.freq, 14 / 6);
    // A part whose rate is unknown (0) adds messages but no span; both unknown leaves the rate unknown, not Infinity.
    const unknown = addRecoveredTotals(
      manifestOf([a]),
      [{ name: 'd.2.vdb', offsetUs: 0, info: info(4, 1_000, [url({ count: 4, size: 40, freq: 0 })]) }],
      'vdbx',
    );
    assert.equal(unknown.urls[0]!.freq, 14 / 5);
    const none = addRecoveredTotals(
      manifestOf([{ ...a, freq: 0 }]),
      [{ name: 'd.2.vdb', offsetUs: 0, info: info(4, 1_000, [url({ count: 4, size: 40, freq: 0 })]) }],
      'vdbx',
    );
    assert.equal(none.urls[0]!.freq, 0);
  });

  test("a new url keeps its segment's index when free, else (or when negative) takes the next free one", () => {
    const totals = addRecoveredTotals(
      manifestOf([a]),
      [
        {
          name: 'd.2.vdb',
          offsetUs: 0,
          info: info(3, 1_000, [
            url({ url: 'free', index: 5, count: 1 }),
            url({ url: 'taken', index: 0, count: 1 }),
            url({ url: 'negative', index: -1, count: 1 }),
          ]),
        },
      ],
      'vdbx',
    );
    assert.deepEqual(
      totals.urls.map((u) => [u.url, u.index]),
      [
        ['a', 0],
        ['free', 5],
        ['taken', 6],
        ['negative', 7],
      ],
    );
    // Index 0 is a valid index: free here (the listed url has 2), so the recovered url keeps it.
    const zero = addRecoveredTotals(
      manifestOf([{ ...a, index: 2 }]),
      [{ name: 'd.2.vdb', offsetUs: 0, info: info(1, 1_000, [url({ url: 'zero', index: 0, count: 1 })]) }],
      'vdbx',
    );
    assert.deepEqual(
      zero.urls.map((u) => [u.url, u.index]),
      [
        ['a', 2],
        ['zero', 0],
      ],
    );
    assert.ok(
      totals.urls.every((u) => !('action' in u)),
      '.vdbx urls have no action',
    );
  });

  test('the repaired manifest holds the new totals per url, .vcapx actions, and doubles written as doubles', () => {
    const text = JSON.stringify({
      VLinkHeader: { count: 10, duration: 9_000_000, complete: false },
      VLinkUrls: [{ ...a, action: 'Pub', freq: 1.0 }],
      VLinkFiles: ['d.1.vcap'],
    });
    const manifest = parseManifest(text, 'd.vcapx', 'vcapx');
    const totals = addRecoveredTotals(
      manifest,
      [{ name: 'd.2.vcap', offsetUs: 0, info: info(2, 1_000, [url({ action: 'Sub', count: 2, size: 6, freq: 2 })]) }],
      'vcapx',
    );
    const repaired = repairedManifestText(text, 'd.vcapx', totals, ['d.2.vcap'], 'vcapx');
    const urls = JSON.parse(repaired).VLinkUrls;
    assert.deepEqual(
      urls.map((u: { url: string; action: string; count: number; size: number }) => [u.url, u.action, u.count, u.size]),
      [
        ['a', 'Pub', 10, 100],
        ['a', 'Sub', 2, 6],
      ],
    );
    // VLink's readers take `freq`/`loss` as doubles: a whole value keeps its `.0`.
    assert.match(repaired, /"freq":\s*1\.0[,\s}]/);
  });
});
