import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Backend, BackendReader, BackendWriter, CursorQuery, RecordingContext } from '../backend/backend.js';
import { BagError } from '../errors.js';
import { countsForFrequency, urlKindOf } from '../model/action-type.js';
import { checkStorableNames } from '../model/url-identity.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info, UrlMeta } from '../model/info.js';
import { formatVlinkDate } from '../model/time-format.js';

/**
 * A deliberately simple backend (`.memjson`: frames as JSON with base64 payloads) for testing core engines and the
 * conformance suite itself without SQLite or MCAP. Not for real recordings.
 */
export const memoryBackend: Backend = {
  name: 'memory',
  extensions: ['.memjson'],
  // Async writers import this module in their worker and pick `memoryBackend` by name.
  workerModule: import.meta.url,
  async createWriter(path, config, context) {
    return new MemoryWriter(path, config, context);
  },
  async openReader(path) {
    if (!existsSync(path)) throw new BagError('NOT_FOUND', 'no such bag', { file: path });
    let doc: StoredDoc;
    try {
      doc = JSON.parse(readFileSync(path, 'utf8')) as StoredDoc;
      if (!Array.isArray(doc.frames)) throw new Error('no frames');
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', 'not a memjson bag', { file: path });
    }
    return new MemoryReader(path, doc);
  },
};

interface StoredFrame {
  t: number;
  u: string;
  a: number;
  s: string;
  k: number;
  d: string;
  /** Publish time, when the frame had one. */
  p?: number;
}
interface StoredDoc {
  start: number;
  tag: string;
  complete: boolean;
  frames: StoredFrame[];
  schemas: Array<Omit<SchemaData, 'data'> & { data: string }>;
  loss: Record<string, number>;
}

function b64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

class MemoryWriter implements BackendWriter {
  private readonly doc: StoredDoc;
  /** Per url id (`BackendWriter.write`): the url it stands for and the ser that url keeps. */
  private readonly urls: Array<{ url: string; ser: string } | undefined> = [];
  private readonly idOfUrl = new Map<string, number>();
  private closed = false;
  constructor(
    private readonly path: string,
    _config: ResolvedWriterConfig,
    private readonly context: RecordingContext,
  ) {
    this.doc = {
      start: context.startTimestamp,
      tag: context.tagName,
      complete: false,
      frames: [],
      schemas: [],
      loss: {},
    };
    this.flush();
  }
  write(frame: Frame, urlId: number): void {
    const entry = this.urls[urlId] ?? this.enter(frame.url, urlId);
    // A test backend holds core to the id contract: one id per url, never shared (a storage error fails the writer).
    if (entry.url !== frame.url) throw new BagError('INTERNAL', `url id ${urlId} is ${entry.url}`, { url: frame.url });
    if (frame.serType !== entry.ser) checkStorableNames(frame.url, frame.serType, { url: frame.url });
    const known = entry.ser;
    if (known && frame.serType && known !== frame.serType)
      throw new BagError('SCHEMA_CONFLICT', 'ser changed', { url: frame.url });
    if (!known && frame.serType) entry.ser = frame.serType;
    const schema = frame.serType ? this.context.resolveSchema(frame.serType, frame.schemaType) : undefined;
    if (schema && !this.doc.schemas.some((s) => s.name === schema.name)) this.writeSchema(schema);
    this.doc.frames.push({
      t: frame.timestamp,
      u: frame.url,
      a: frame.actionType,
      s: frame.serType,
      k: frame.schemaType,
      d: b64(frame.data),
      ...(frame.publishTime !== undefined ? { p: frame.publishTime } : {}),
    });
  }
  private enter(url: string, urlId: number): { url: string; ser: string } {
    const known = this.idOfUrl.get(url);
    if (known !== undefined) throw new BagError('INTERNAL', `url id ${urlId}, was ${known}`, { url });
    if (!Number.isInteger(urlId) || urlId < 0) throw new BagError('INTERNAL', `bad url id ${urlId}`, { url });
    checkStorableNames(url, '', { url });
    this.idOfUrl.set(url, urlId);
    const entry = { url, ser: '' };
    this.urls[urlId] = entry;
    return entry;
  }
  writeSchema(schema: SchemaData): void {
    this.doc.schemas.push({ ...schema, data: b64(schema.data) });
  }
  setUrlLoss(url: string, loss: number): void {
    this.doc.loss[url] = loss > 1 ? -1 : loss;
  }
  commit(): void {
    this.flush();
  }
  tick(): void {}
  currentFile(): string {
    return this.path;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.doc.complete = true;
    this.flush();
  }
  private flush(): void {
    writeFileSync(this.path, JSON.stringify(this.doc));
  }
}

class MemoryReader implements BackendReader {
  constructor(
    readonly path: string,
    private readonly doc: StoredDoc,
  ) {}
  info(): Info {
    const frames = this.doc.frames;
    const metas = new Map<string, UrlMeta & { first: number; last: number }>();
    for (const f of frames) {
      let m = metas.get(f.u);
      if (!m) {
        m = {
          index: metas.size,
          url: f.u,
          type: urlKindOf(f.a),
          ser: f.s,
          schemaType: f.k,
          count: 0,
          size: 0,
          loss: this.doc.loss[f.u] ?? 0,
          freq: 0,
          first: -1,
          last: -1,
        };
        metas.set(f.u, m);
      }
      m.count++;
      m.size += unb64(f.d).length;
      if (countsForFrequency(f.a)) {
        if (m.first < 0) m.first = f.t;
        m.last = f.t;
      }
    }
    const urls = [...metas.values()].map(({ first, last, ...m }) => ({
      ...m,
      freq: last > first ? m.count / ((last - first) / 1e6) : 0,
    }));
    const times = frames.map((f) => f.t);
    return {
      path: this.path,
      format: 'memjson',
      version: '2.1.0',
      storageType: 'memory',
      messageCount: frames.length,
      totalDuration: times.length ? Math.floor(Math.max(...times) / 1000) : 0,
      blankDuration: times.length ? Math.floor(Math.min(...times) / 1000) : 0,
      timeAccuracy: 'MicroSecond',
      compressionType: 'None',
      processName: 'memory',
      dateTime: formatVlinkDate(this.doc.start),
      tagName: this.doc.tag,
      hasCompleted: this.doc.complete,
      timezone: 0,
      startTimestamp: this.doc.start,
      splitCount: 1,
      splitBySize: 0,
      splitByTime: 0,
      hasSchema: this.doc.schemas.length > 0,
      totalRawSize: urls.reduce((s, m) => s + m.size, 0),
      fileSize: JSON.stringify(this.doc).length,
      urls,
    };
  }
  schemas(): SchemaData[] {
    return this.doc.schemas.map((s) => ({ ...s, data: unb64(s.data) }));
  }
  *frames(query: CursorQuery): IterableIterator<Frame> {
    const urls = query.urls ? new Set(query.urls) : undefined;
    const order = this.doc.frames.map((f, i) => [f, i] as const).sort((a, b) => a[0].t - b[0].t || a[1] - b[1]);
    for (const [f] of order) {
      if (urls && !urls.has(f.u)) continue;
      if (query.beginUs !== undefined && f.t < query.beginUs) continue;
      if (query.endUs !== undefined && f.t > query.endUs) continue;
      yield {
        timestamp: f.t,
        url: f.u,
        data: unb64(f.d),
        serType: f.s,
        schemaType: f.k,
        actionType: f.a,
        publishTime: f.p ?? f.t,
      };
    }
  }
  close(): void {}
}
