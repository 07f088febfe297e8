import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { writeFrame } from '../testing/write-frame.js';
import { fakeSegmentReader, frame, setup } from './split-recording.test.helper.js';
import { SplitReader } from './split-reader.js';

describe('SplitReader over SplitWriter output', () => {
  async function recorded(timestamps: number[]) {
    const { files, format, open } = setup({ splitBySize: 25 });
    const writer = open();
    for (const ts of timestamps) writeFrame(writer, frame(ts, ts % 2000 === 0 ? 'dds://even' : 'dds://a'));
    writer.close();
    const reader = await SplitReader.open(
      '/rec/drive.vdbx',
      {
        flavor: 'vdbx',
        storageType: 'fake',
        segmentExtension: '.seg',
        openSegment: async (p) => fakeSegmentReader(p, files),
      },
      { files },
    );
    return { files, format, reader };
  }

  test('one bag: info from the manifest, frames across segments, windows, schemas merged', async () => {
    const { reader } = await recorded([1000, 2000, 3000, 4000, 5000, 6000, 7000]);
    const info = reader.info();
    assert.equal(info.format, 'vdbx');
    assert.equal(info.splitCount, 4);
    assert.equal(info.messageCount, 7);
    assert.equal(info.totalDuration, 7);
    assert.equal(info.blankDuration, 1);
    assert.equal(info.hasCompleted, true);
    assert.deepEqual(
      [...reader.frames({})].map((f) => f.timestamp),
      [1000, 2000, 3000, 4000, 5000, 6000, 7000],
    );
    assert.deepEqual(
      [...reader.frames({ beginUs: 3000, endUs: 6000 })].map((f) => f.timestamp),
      [3000, 4000, 5000, 6000],
    );
    assert.deepEqual(
      [...reader.frames({ urls: ['dds://even'], beginUs: 3000 })].map((f) => f.timestamp),
      [4000, 6000],
    );
    assert.deepEqual([...reader.frames({ beginUs: 9000 })], []);
    assert.equal(reader.schemas().length, 1);
    const early = reader.frames({});
    early.next();
    early.return?.();
    assert.equal(early.next().done, true);
    reader.close();
  });

  test('bad manifests: missing segment, path entries, garbage, no segments', async () => {
    const { files } = await recorded([1000, 2000, 3000]);
    const open = () =>
      SplitReader.open(
        '/rec/drive.vdbx',
        {
          flavor: 'vdbx',
          storageType: 'fake',
          segmentExtension: '.seg',
          openSegment: async (p) => fakeSegmentReader(p, files),
        },
        { files },
      );
    const text = files.readText('/rec/drive.vdbx');
    files.data.set('/rec/drive.vdbx', text.replace('drive.2.seg', 'drive.9.seg'));
    await assert.rejects(
      open(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND' && e.file === '/rec/drive.9.seg',
    );
    files.data.set('/rec/drive.vdbx', text.replace('drive.2.seg', '../drive.2.seg'));
    await assert.rejects(
      open(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /\.\.\/drive\.2\.seg/.test(e.message),
    );
    files.data.set('/rec/drive.vdbx', '\u0000garbage');
    await assert.rejects(open(), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    files.data.set('/rec/drive.vdbx', JSON.stringify({ VLinkHeader: {}, VLinkFiles: [] }));
    await assert.rejects(open(), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    files.data.delete('/rec/drive.vdbx');
    await assert.rejects(open(), (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND');
  });

  test('a segment that does not open is CORRUPT_FILE, or skipped with tryToFix (then incomplete)', async () => {
    const { files } = await recorded([1000, 2000, 3000]);
    files.data.set('/rec/drive.1.seg', 'not json');
    const format = {
      flavor: 'vdbx' as const,
      storageType: 'fake',
      segmentExtension: '.seg',
      openSegment: async (p: string) => fakeSegmentReader(p, files),
    };
    await assert.rejects(
      SplitReader.open('/rec/drive.vdbx', format, { files }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && e.file === '/rec/drive.1.seg',
    );
    const reader = await SplitReader.open('/rec/drive.vdbx', format, { files, tryToFix: true });
    assert.equal(reader.info().splitCount, 1);
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(await reader.check(), false);
    reader.close();
  });

  test('rebased segments: timestamps and bounds shift by the segment start', async () => {
    const { files } = await recorded([1000, 2000, 3000, 4000]);
    let n = 0;
    const reader = await SplitReader.open(
      '/rec/drive.vdbx',
      {
        flavor: 'vcapx',
        storageType: 'fake',
        segmentExtension: '.seg',
        rebaseOnFirstSegment: true,
        openSegment: async (p) => fakeSegmentReader(p, files, 100 + n++),
      },
      { files },
    );
    // segment k starts k ms later, so its frames move k·1000 µs later on the first segment's base
    assert.deepEqual(
      [...reader.frames({})].map((f) => f.timestamp),
      [1000, 2000, 4000, 5000],
    );
    assert.deepEqual(
      [...reader.frames({ beginUs: 4000 })].map((f) => f.timestamp),
      [4000, 5000],
    );
    reader.close();
  });
});
