import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { resolveWriterConfig } from '../model/config.js';
import { createTestContext } from '../testing/context.js';
import { writeFrame } from '../testing/write-frame.js';
import { frame, manifestOf, setup } from './split-recording.test.helper.js';
import { SplitWriter } from './split-writer.js';

describe('SplitWriter', () => {
  test("passes each frame's url id through to the segment that stores it, the same in every segment", () => {
    const { format, open } = setup({ splitBySize: 25 });
    const writer = open();
    writer.write(frame(1000, 'dds://a'), 9);
    writer.write(frame(2000, 'dds://b'), 2);
    writer.write(frame(3000, 'dds://a'), 9); // 20 + 10 > 25: segment 2
    writer.close();
    assert.deepEqual(format.writes, [
      '/rec/drive.1.seg dds://a #9',
      '/rec/drive.1.seg dds://b #2',
      '/rec/drive.2.seg dds://a #9',
    ]);
  });

  test('manifest at construction, after every split (open segment left out) and at close', () => {
    const { files, calls, open } = setup({ splitBySize: 25 });
    const writer = open();
    assert.deepEqual(files.log, ['manifest  complete=false', 'open /rec/drive.1.seg']);
    assert.equal(writer.currentFile(), '/rec/drive.1.seg');
    writeFrame(writer, frame(1000)); // first write: (0, first file, after)
    writeFrame(writer, frame(2000)); // 20 bytes
    writeFrame(writer, frame(3000)); // 20 + 10 > 25: split, this frame goes to segment 2
    writeFrame(writer, frame(4000, 'dds://b'));
    writer.close();
    writer.close();
    assert.deepEqual(calls, ['after 0 /rec/drive.1.seg', 'before 1 /rec/drive.2.seg', 'after 1 /rec/drive.2.seg']);
    assert.deepEqual(files.log, [
      'manifest  complete=false',
      'open /rec/drive.1.seg',
      'close /rec/drive.1.seg',
      'open /rec/drive.2.seg',
      'manifest drive.1.seg complete=false',
      'close /rec/drive.2.seg',
      'manifest drive.1.seg,drive.2.seg complete=true',
    ]);
    assert.equal(files.data.get('/rec/drive.2.seg'), '[[3000,"dds://a",10],[4000,"dds://b",10]]');
    const m = manifestOf(files);
    assert.equal(m.VLinkHeader.count, 4);
    assert.equal(m.VLinkHeader.duration, 4000);
    assert.equal(m.VLinkHeader.split_by_size, 25);
    assert.deepEqual(
      m.VLinkUrls.map((u: { url: string; count: number; size: number }) => [u.url, u.count, u.size]),
      [
        ['dds://a', 3, 30],
        ['dds://b', 1, 10],
      ],
    );
    assert.equal(m.VLinkUrls[0].freq, 3 / (2000 / 1e6));
  });

  test('no split before the segment holds a url; the initial manifest is empty', () => {
    const { files, open } = setup({ splitBySize: 5 });
    const writer = open();
    const initial = manifestOf(files);
    assert.deepEqual(initial.VLinkFiles, []);
    assert.equal(initial.VLinkHeader.complete, false);
    assert.equal(initial.VLinkHeader.count, 0);
    writeFrame(writer, frame(1, 'dds://a', 100)); // bigger than splitBySize, but the segment is empty
    writeFrame(writer, frame(2, 'dds://a', 1)); // now it splits
    writer.close();
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg', 'drive.2.seg']);
  });

  test('time splits: fixed boundaries, one split per message, segment dates at the trigger', () => {
    const { files, format, open, context } = setup({ splitByTime: 1000, splitBySize: 1, beginTime: 0 });
    const writer = open();
    for (const ts of [0, 500_000, 1_000_000, 1_000_001, 1_500_000, 7_000_000, 7_100_000]) writeFrame(writer, frame(ts));
    writer.close();
    // 7.0 s passes the 2 s boundary (one split, not six); 7.1 s is then past the 3 s boundary of index 2.
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg', 'drive.2.seg', 'drive.3.seg', 'drive.4.seg']);
    assert.deepEqual(
      format.opened.map((o) => o.openedAt - context.startTimestamp),
      [0, 1000, 7000, 7100],
    );
    assert.equal(manifestOf(files).VLinkHeader.split_by_size, 0);
    assert.equal(manifestOf(files).VLinkHeader.split_by_time, 1000);
  });

  test('maxSplitCount deletes the oldest files and recomputes the totals; urls left with nothing are omitted', () => {
    const { files, open } = setup({ splitBySize: 15, maxSplitCount: 2 });
    const writer = open();
    writeFrame(writer, frame(1, 'dds://old'));
    writeFrame(writer, frame(2, 'dds://a'));
    writeFrame(writer, frame(3, 'dds://a'));
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.2.seg']);
    assert.equal(files.exists('/rec/drive.1.seg'), false);
    writer.close();
    const m = manifestOf(files);
    assert.deepEqual(m.VLinkFiles, ['drive.2.seg', 'drive.3.seg']);
    assert.equal(m.VLinkHeader.count, 2);
    assert.equal(m.VLinkHeader.duration, 3);
    assert.deepEqual(
      m.VLinkUrls.map((u: { url: string; index: number }) => [u.url, u.index]),
      [['dds://a', 1]],
    );
    // The deletion comes after the manifest rewrite (format reference §4.3 steps 6–7).
    const log = files.log.join('\n');
    assert.ok(log.indexOf('manifest drive.2.seg complete=false') < log.indexOf('remove /rec/drive.1.seg'));
  });

  test('an old recording at the path is removed: bare names only, then the manifest', () => {
    const { files, open, warnings } = setup({});
    files.data.set('/rec/drive.vdbx', JSON.stringify({ VLinkFiles: ['old.1.seg', '../../etc/passwd', 'old.2.seg'] }));
    files.data.set('/rec/old.1.seg', 'x');
    files.data.set('/rec/old.2.seg', 'x');
    files.data.set('/etc/passwd', 'x');
    open().close();
    assert.equal(files.exists('/rec/old.1.seg'), false);
    assert.equal(files.exists('/rec/old.2.seg'), false);
    assert.equal(files.exists('/etc/passwd'), true);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /not a plain file name/);
  });

  test('an old manifest that does not parse only warns', () => {
    const { files, open, warnings } = setup({});
    files.data.set('/rec/drive.vdbx', '{ not json');
    open().close();
    assert.equal(warnings.length, 1);
    assert.equal(manifestOf(files).VLinkHeader.complete, true);
  });

  test('names by time with the duplicate rule', () => {
    const { files, open, context } = setup({ splitBySize: 5, splitNameByTime: true });
    const writer = open();
    writeFrame(writer, frame(0));
    writeFrame(writer, frame(100)); // same ms as the recording start → .2
    writeFrame(writer, frame(2500));
    writer.close();
    const base = (ms: number) => {
      const d = new Date(context.startTimestamp + ms);
      const p = (n: number, w = 2) => String(n).padStart(w, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}_${p(d.getHours())}-${p(d.getMinutes())}-${p(d.getSeconds())}-${p(d.getMilliseconds(), 3)}`;
    };
    assert.deepEqual(manifestOf(files).VLinkFiles, [`${base(0)}.seg`, `${base(0)}.2.seg`, `${base(2)}.seg`]);
  });

  test('a rejected frame is not stored and does not stop the recording; loss is recording-wide', () => {
    const { files, open } = setup({ splitBySize: 1000 });
    const writer = open();
    writeFrame(writer, frame(1));
    assert.throws(
      () => writeFrame(writer, frame(2, 'reject')),
      (e: unknown) => BagError.isInstance(e) && e.code === 'SCHEMA_CONFLICT',
    );
    writer.setUrlLoss('dds://a', 0.5);
    writer.close();
    assert.equal(manifestOf(files).VLinkHeader.count, 1);
    assert.equal(manifestOf(files).VLinkUrls[0].loss, 0.5);
    assert.match(files.data.get('/rec/drive.vdbx')!, /"loss": 0\.5,\n {12}"freq": 0\.0/);
  });

  test('a segment that cannot be opened fails the writer; the manifest stays complete:false', () => {
    const { files, open } = setup({ splitBySize: 5 }, new Set([1]));
    const writer = open();
    writeFrame(writer, frame(1));
    assert.throws(
      () => writeFrame(writer, frame(2)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
    );
    assert.throws(
      () => writeFrame(writer, frame(3)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
    );
    writer.close();
    const m = manifestOf(files);
    assert.deepEqual(m.VLinkFiles, ['drive.1.seg']);
    assert.equal(m.VLinkHeader.complete, false);
    assert.throws(
      () => writeFrame(writer, frame(4)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
  });

  test('overwriteSegments: false refuses a file at a new segment name and leaves it as it was', () => {
    // At the first segment: the writer does not open, and takes its manifest back.
    const first = setup({ splitBySize: 5, overwriteSegments: false });
    first.files.data.set('/rec/drive.1.seg', 'unrelated');
    assert.throws(
      () => first.open(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && e.file === '/rec/drive.1.seg',
    );
    assert.equal(first.files.data.get('/rec/drive.1.seg'), 'unrelated');
    assert.equal(first.files.exists('/rec/drive.vdbx'), false);
    // At a split: the writer fails there, the segments it wrote stay listed, the recording is not complete.
    const { files, open } = setup({ splitBySize: 5, overwriteSegments: false });
    files.data.set('/rec/drive.2.seg', 'unrelated');
    const writer = open();
    writeFrame(writer, frame(1));
    assert.throws(
      () => writeFrame(writer, frame(2)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && /not overwritten/.test(e.message),
    );
    writer.close();
    assert.equal(files.data.get('/rec/drive.2.seg'), 'unrelated');
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg']);
    assert.equal(manifestOf(files).VLinkHeader.complete, false);
    // The default is VLink's: the file is replaced.
    const vlink = setup({ splitBySize: 5 });
    vlink.files.data.set('/rec/drive.1.seg', 'unrelated');
    vlink.open().close();
    assert.equal(vlink.files.data.get('/rec/drive.1.seg'), '[]');
  });

  test('a throwing split callback is reported, the split goes on', () => {
    const { files, format, warnings } = setup({});
    const context = createTestContext({
      onSplit: () => {
        throw new Error('user bug');
      },
    });
    const writer = SplitWriter.open({
      path: '/rec/drive.vdbx',
      config: resolveWriterConfig({ splitBySize: 5 }),
      context,
      format,
      files,
      warn: (m) => warnings.push(m),
    });
    writeFrame(writer, frame(1));
    writeFrame(writer, frame(2));
    writer.close();
    assert.equal(warnings.length, 3);
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg', 'drive.2.seg']);
  });
});
