import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { BackendReader, CursorQuery } from '../backend/backend.js';
import { BagError } from '../errors.js';
import { ActionType, urlKindOf } from '../model/action-type.js';
import { resolveWriterConfig, type WriterConfig } from '../model/config.js';
import type { Frame } from '../model/frame.js';
import type { Info } from '../model/info.js';
import { SchemaType } from '../model/schema-type.js';
import { createTestContext } from '../testing/context.js';
import type { UrlCounters } from './segment-ledger.js';
import type { SplitFiles } from './split-files.js';
import { SplitReader } from './split-reader.js';
import { SplitWriter, type RecordingUrlIdentity, type SegmentWriter, type SplitFormat } from './split-writer.js';

/** Files in a Map: segments are JSON lists of frames, so the reader side can be faked too. */
class MemoryFiles implements SplitFiles {
  readonly data = new Map<string, string>();
  readonly log: string[] = [];
  exists = (path: string) => this.data.has(path);
  size = (path: string) => (this.data.has(path) ? this.data.get(path)!.length : -1);
  readText(path: string): string {
    const text = this.data.get(path);
    if (text === undefined) throw new Error(`ENOENT ${path}`);
    return text;
  }
  writeText(path: string, text: string): void {
    this.data.set(path, text);
    if (path.endsWith('x'))
      this.log.push(
        `manifest ${JSON.parse(text).VLinkFiles.join(',')} complete=${JSON.parse(text).VLinkHeader.complete}`,
      );
  }
  remove(path: string): void {
    this.data.delete(path);
    this.log.push(`remove ${path}`);
  }
  ensureDir(): void {}
  list(dir: string): string[] {
    return [...this.data.keys()]
      .filter((path) => path.startsWith(dir) && !path.slice(dir.length).includes('/'))
      .map((path) => path.slice(dir.length));
  }
}

/** A trivial format: one recording-wide url table, segments that store frames as JSON on close. */
class FakeFormat implements SplitFormat {
  readonly flavor = 'vdbx' as const;
  readonly segmentExtension = '.seg';
  readonly compress = 'None';
  readonly table = new Map<string, RecordingUrlIdentity>();
  readonly opened: Array<{ path: string; openedAt: number }> = [];
  constructor(
    private readonly files: MemoryFiles,
    private readonly failOpen = new Set<number>(),
  ) {}
  openSegment(path: string, openedAt: number): SegmentWriter {
    if (this.failOpen.has(this.opened.length)) throw new BagError('IO_ERROR', 'disk full', { file: path });
    this.opened.push({ path, openedAt });
    this.files.data.set(path, '[]');
    this.files.log.push(`open ${path}`);
    const frames: Frame[] = [];
    const urls = new Map<number, UrlCounters>();
    let bytes = 0;
    let maxTs = 0;
    const table = this.table;
    const files = this.files;
    return {
      path,
      write(frame) {
        if (frame.url === 'reject') throw new BagError('SCHEMA_CONFLICT', 'no');
        let id = table.get(frame.url);
        if (!id)
          table.set(
            frame.url,
            (id = {
              index: table.size,
              url: frame.url,
              type: urlKindOf(frame.actionType),
              ser: frame.serType,
              encoding: '',
              loss: 0,
            }),
          );
        const c = urls.get(id.index) ?? { count: 0, size: 0, firstTs: -1, lastTs: -1 };
        c.count++;
        c.size += frame.data.length;
        if (c.firstTs < 0) c.firstTs = frame.timestamp;
        c.lastTs = frame.timestamp;
        urls.set(id.index, c);
        bytes += frame.data.length;
        maxTs = Math.max(maxTs, frame.timestamp);
        frames.push(frame);
      },
      writeSchema() {},
      commit() {},
      tick() {},
      close() {
        files.data.set(path, JSON.stringify(frames.map((f) => [f.timestamp, f.url, f.data.length])));
        files.log.push(`close ${path}`);
      },
      urlCount: () => urls.size,
      bytes: () => bytes,
      stats: () => ({ rows: frames.length, maxTs, urls: new Map([...urls].map(([k, v]) => [k, { ...v }])) }),
    };
  }
  urls(): RecordingUrlIdentity[] {
    return [...this.table.values()];
  }
  setUrlLoss(url: string, loss: number): void {
    const u = this.table.get(url);
    if (u) u.loss = loss > 1 ? -1 : loss;
  }
}

function frame(timestamp: number, url = 'dds://a', size = 10): Frame {
  return {
    timestamp,
    url,
    data: new Uint8Array(size),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

function setup(config: Partial<WriterConfig>, failOpen?: Set<number>) {
  const files = new MemoryFiles();
  const format = new FakeFormat(files, failOpen);
  const calls: string[] = [];
  const context = createTestContext({
    onSplit: (index, file, before) => calls.push(`${before ? 'before' : 'after'} ${index} ${file}`),
  });
  const warnings: string[] = [];
  const open = () =>
    SplitWriter.open({
      path: '/rec/drive.vdbx',
      config: resolveWriterConfig(config),
      context,
      format,
      files,
      warn: (m) => warnings.push(m),
    });
  return { files, format, calls, context, warnings, open };
}

const manifestOf = (files: MemoryFiles) => JSON.parse(files.data.get('/rec/drive.vdbx')!);

describe('SplitWriter', () => {
  test('manifest at construction, after every split (open segment left out) and at close', () => {
    const { files, calls, open } = setup({ splitBySize: 25 });
    const writer = open();
    assert.deepEqual(files.log, ['manifest  complete=false', 'open /rec/drive.1.seg']);
    assert.equal(writer.currentFile(), '/rec/drive.1.seg');
    writer.write(frame(1000)); // first write: (0, first file, after)
    writer.write(frame(2000)); // 20 bytes
    writer.write(frame(3000)); // 20 + 10 > 25: split, this frame goes to segment 2
    writer.write(frame(4000, 'dds://b'));
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
    writer.write(frame(1, 'dds://a', 100)); // bigger than splitBySize, but the segment is empty
    writer.write(frame(2, 'dds://a', 1)); // now it splits
    writer.close();
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg', 'drive.2.seg']);
  });

  test('time splits: fixed boundaries, one split per message, segment dates at the trigger', () => {
    const { files, format, open, context } = setup({ splitByTime: 1000, splitBySize: 1, beginTime: 0 });
    const writer = open();
    for (const ts of [0, 500_000, 1_000_000, 1_000_001, 1_500_000, 7_000_000, 7_100_000]) writer.write(frame(ts));
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
    writer.write(frame(1, 'dds://old'));
    writer.write(frame(2, 'dds://a'));
    writer.write(frame(3, 'dds://a'));
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
    writer.write(frame(0));
    writer.write(frame(100)); // same ms as the recording start → .2
    writer.write(frame(2500));
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
    writer.write(frame(1));
    assert.throws(
      () => writer.write(frame(2, 'reject')),
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
    writer.write(frame(1));
    assert.throws(
      () => writer.write(frame(2)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
    );
    assert.throws(
      () => writer.write(frame(3)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
    );
    writer.close();
    const m = manifestOf(files);
    assert.deepEqual(m.VLinkFiles, ['drive.1.seg']);
    assert.equal(m.VLinkHeader.complete, false);
    assert.throws(
      () => writer.write(frame(4)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
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
    writer.write(frame(1));
    writer.write(frame(2));
    writer.close();
    assert.equal(warnings.length, 3);
    assert.deepEqual(manifestOf(files).VLinkFiles, ['drive.1.seg', 'drive.2.seg']);
  });
});

/** Reader side over the fake segments: the segment "reader" returns the stored frames. */
function fakeSegmentReader(path: string, files: MemoryFiles, startTimestamp = 0): BackendReader {
  const rows = JSON.parse(files.readText(path)) as Array<[number, string, number]>;
  if (!Array.isArray(rows)) throw new Error('bad');
  const info: Info = {
    path,
    format: 'seg',
    version: '2.1.0',
    storageType: 'fake',
    messageCount: rows.length,
    totalDuration: rows.length ? Math.trunc(Math.max(...rows.map((r) => r[0])) / 1000) : 0,
    blankDuration: rows.length ? Math.trunc(rows[0]![0] / 1000) : 0,
    timeAccuracy: 'MicroSecond',
    compressionType: 'None',
    processName: 'p',
    dateTime: '',
    tagName: 'Empty',
    hasCompleted: true,
    timezone: 0,
    startTimestamp,
    splitCount: 1,
    splitBySize: 0,
    splitByTime: 0,
    hasSchema: false,
    totalRawSize: 0,
    fileSize: 0,
    urls: [],
  };
  return {
    path,
    info: () => info,
    schemas: () => [{ name: 'pb.X', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: new Uint8Array([1]) }],
    *frames(q: CursorQuery) {
      for (const [t, url, n] of rows) {
        if (q.beginUs !== undefined && t < q.beginUs) continue;
        if (q.endUs !== undefined && t > q.endUs) continue;
        if (q.urls && !q.urls.includes(url)) continue;
        yield {
          timestamp: t,
          url,
          data: new Uint8Array(n),
          serType: '',
          schemaType: SchemaType.Unknown,
          actionType: ActionType.Publish,
        };
      }
    },
    close() {},
  };
}

describe('SplitReader over SplitWriter output', () => {
  async function recorded(timestamps: number[]) {
    const { files, format, open } = setup({ splitBySize: 25 });
    const writer = open();
    for (const ts of timestamps) writer.write(frame(ts, ts % 2000 === 0 ? 'dds://even' : 'dds://a'));
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
