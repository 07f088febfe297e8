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
import { SplitWriter, type RecordingUrlIdentity, type SegmentWriter, type SplitFormat } from './split-writer.js';

// A split recording in memory, for the SplitWriter and SplitReader tests: files in a Map, a fake segment format whose
// segments store frames as JSON, and a reader over those segments.

/** Files in a Map: segments are JSON lists of frames, so the reader side can be faked too. */
export class MemoryFiles implements SplitFiles {
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
export class FakeFormat implements SplitFormat {
  readonly flavor = 'vdbx' as const;
  readonly segmentExtension = '.seg';
  readonly compress = 'None';
  readonly table = new Map<string, RecordingUrlIdentity>();
  readonly opened: Array<{ path: string; openedAt: number }> = [];
  /** `segment path url #id` of every frame a segment received. */
  readonly writes: string[] = [];
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
    const writes = this.writes;
    return {
      path,
      write(frame, urlId) {
        writes.push(`${path} ${frame.url} #${urlId}`);
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

export function frame(timestamp: number, url = 'dds://a', size = 10): Frame {
  return {
    timestamp,
    url,
    data: new Uint8Array(size),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

export function setup(config: Partial<WriterConfig>, failOpen?: Set<number>) {
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

export const manifestOf = (files: MemoryFiles) => JSON.parse(files.data.get('/rec/drive.vdbx')!);

/** Reader side over the fake segments: the segment "reader" returns the stored frames. */
export function fakeSegmentReader(path: string, files: MemoryFiles, startTimestamp = 0): BackendReader {
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
