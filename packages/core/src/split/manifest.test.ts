import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { SchemaType } from '../model/schema-type.js';
import { serializeManifest, type SplitManifest } from './manifest.js';
import { listedSegments, parseManifest } from './manifest-parse.js';

const manifest: SplitManifest = {
  header: {
    major: 2,
    minor: 1,
    patch: 0,
    count: 12345,
    duration: 60001234,
    accuracy: 'MicroSecond',
    compress: 'lzav',
    process: 'my_app',
    date: '2026/03/17 10:00:00:123',
    tag: 'Empty',
    splitBySize: 1073741824,
    splitByTime: 0,
    complete: true,
    timezone: 480,
    startTimestamp: 1773712800123,
  },
  urls: [
    {
      index: 0,
      url: 'dds://camera/front',
      type: 'Event',
      action: 'Pub',
      ser: 'pb.Image',
      encoding: 'protobuf',
      count: 600,
      size: 123456789,
      loss: 0,
      freq: 10,
    },
  ],
  files: ['drive.1.vdb', 'drive.2.vdb'],
};

const corrupt = (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE';

describe('manifest serializer', () => {
  test('.vdbx: VLink key order and types, 4-space indent', () => {
    assert.equal(
      serializeManifest(manifest, 'vdbx'),
      `{
    "VLinkHeader": {
        "major": 2,
        "minor": 1,
        "patch": 0,
        "count": 12345,
        "duration": 60001234,
        "accuracy": "MicroSecond",
        "compress": "lzav",
        "process": "my_app",
        "date": "2026/03/17 10:00:00:123",
        "tag": "Empty",
        "split_by_size": 1073741824,
        "split_by_time": 0,
        "complete": true,
        "timezone": 480,
        "start_timestamp": 1773712800123
    },
    "VLinkUrls": [
        {
            "index": 0,
            "url": "dds://camera/front",
            "type": "Event",
            "ser": "pb.Image",
            "encoding": "protobuf",
            "count": 600,
            "size": 123456789,
            "loss": 0.0,
            "freq": 10.0
        }
    ],
    "VLinkFiles": [
        "drive.1.vdb",
        "drive.2.vdb"
    ]
}`,
    );
  });

  test('.vcapx: action right after type; an empty recording keeps empty arrays', () => {
    const text = serializeManifest({ ...manifest, files: [] }, 'vcapx');
    const keys = [...text.matchAll(/^ {12}"(\w+)"/gm)].map((m) => m[1]);
    assert.deepEqual(keys, ['index', 'url', 'type', 'action', 'ser', 'encoding', 'count', 'size', 'loss', 'freq']);
    assert.match(text, /"VLinkFiles": \[\]\n\}$/);
    assert.match(serializeManifest({ ...manifest, urls: [] }, 'vdbx'), /"VLinkUrls": \[\],/);
    // A url without an action (a .vdbx recording's, converted) is written as VLink's `Unknown`, never left out.
    const actionless = manifest.urls.map(({ action: _, ...u }) => u);
    const written = serializeManifest({ ...manifest, urls: actionless, files: [] }, 'vcapx');
    assert.equal([...written.matchAll(/"action": "Unknown"/g)].length, actionless.length);
  });
});

describe('manifest parser', () => {
  test('reads what the serializer writes', () => {
    const parsed = parseManifest(serializeManifest(manifest, 'vcapx'), 'x.vcapx', 'vcapx');
    assert.deepEqual(parsed.version, { major: 2, minor: 1, patch: 0 });
    assert.equal(parsed.count, 12345);
    assert.equal(parsed.duration, 60001234);
    assert.equal(parsed.startTimestamp, 1773712800123);
    assert.equal(parsed.complete, true);
    assert.deepEqual(parsed.files, ['drive.1.vdb', 'drive.2.vdb']);
    assert.deepEqual(parsed.urls, [
      {
        index: 0,
        url: 'dds://camera/front',
        type: 'Event',
        action: 'Pub',
        ser: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        count: 600,
        size: 123456789,
        loss: 0,
        freq: 10,
      },
    ]);
  });

  test("VLink's defaults: tag Empty, complete true, timezone 480, start from date, optional url keys", () => {
    const parsed = parseManifest(
      JSON.stringify({
        VLinkHeader: { date: '2026/03/17 10:00:00:123' },
        VLinkUrls: [{ index: 3, url: 'a', type: 'Odd', ser: 'json', count: 2 }],
        VLinkFiles: [],
      }),
      'x.vdbx',
      'vdbx',
    );
    assert.equal(parsed.tag, 'Empty');
    assert.equal(parsed.complete, true);
    assert.equal(parsed.timezone, 480);
    assert.equal(parsed.version, undefined);
    assert.equal(parsed.startTimestamp, new Date(2026, 2, 17, 10, 0, 0, 123).getTime());
    assert.deepEqual(parsed.urls[0], {
      index: 3,
      url: 'a',
      type: 'Unknown',
      ser: 'json',
      schemaType: SchemaType.Raw,
      count: 2,
      size: 0,
      loss: 0,
      freq: 0,
    });
  });

  test('garbled JSON, wrong shapes and wrong types are CORRUPT_FILE naming the file', () => {
    assert.throws(
      () => parseManifest('{"VLinkHeader": {', 'bad.vdbx', 'vdbx'),
      (e: unknown) => corrupt(e) && (e as BagError).file === 'bad.vdbx',
    );
    assert.throws(() => parseManifest('[1]', 'a.vdbx', 'vdbx'), corrupt);
    assert.throws(() => parseManifest('{"VLinkFiles": []}', 'a.vdbx', 'vdbx'), corrupt);
    assert.throws(() => parseManifest('{"VLinkHeader": {}}', 'a.vdbx', 'vdbx'), corrupt);
    assert.throws(
      () => parseManifest('{"VLinkHeader": {"count": "7"}, "VLinkFiles": []}', 'a.vdbx', 'vdbx'),
      /VLinkHeader\.count is not a number/,
    );
    assert.throws(
      () => parseManifest('{"VLinkHeader": {}, "VLinkFiles": [], "VLinkUrls": [{"url": 5}]}', 'a.vdbx', 'vdbx'),
      /VLinkUrls\[0\]\.url/,
    );
  });

  test('segment entries must be bare names in the manifest directory', () => {
    for (const bad of [
      '../x.vdb',
      '/etc/passwd',
      'sub/x.vdb',
      'sub\\x.vdb',
      'C:x.vdb',
      '..',
      '.',
      '',
      'a\0b',
      7,
      null,
    ]) {
      assert.throws(
        () => parseManifest(JSON.stringify({ VLinkHeader: {}, VLinkFiles: ['ok.vdb', bad] }), 'm.vdbx', 'vdbx'),
        (e: unknown) => corrupt(e) && /VLinkFiles\[1\]/.test((e as Error).message),
        String(bad),
      );
    }
  });

  test('listedSegments keeps bare names and reports the rest; undefined for non-manifests', () => {
    assert.deepEqual(listedSegments('{"VLinkFiles": ["a.vdb", "../b.vdb", "c.vdb"]}'), {
      names: ['a.vdb', 'c.vdb'],
      skipped: ['../b.vdb'],
    });
    assert.equal(listedSegments('not json'), undefined);
    assert.equal(listedSegments('{"VLinkFiles": 3}'), undefined);
  });
});
