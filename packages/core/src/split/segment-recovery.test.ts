import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { Info, UrlMeta } from '../model/info.js';
import { SchemaType } from '../model/schema-type.js';
import { parseManifest } from './manifest-parse.js';
import { addRecoveredTotals, repairedManifestText, unlistedSegmentNames } from './segment-recovery.js';

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
  const info = (messageCount: number, totalDuration: number, urls: UrlMeta[]) =>
    ({ messageCount, totalDuration, urls }) as unknown as Info;
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
