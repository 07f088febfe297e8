import type { SchemaType } from '@vlink/bag-core';
import { UrlIdCache } from '@vlink/bag-core/internal';
import type { RecordingSnapshot, RecordingUrl } from './recording.js';

/** A url as one file knows it (its `VLinkUrls` row and per-file counters). */
export interface FileUrl {
  readonly rec: RecordingUrl;
  readonly id: number;
  readonly url: string;
  count: number;
  /** Accounted (uncompressed) bytes. */
  size: number;
  /** First and last Pub/Sub/Set/Get timestamps in this file (insertion order), −1 when none. */
  firstTs: number;
  lastTs: number;
  /** What the file's `VLinkUrls` row holds, to know when `UPDATE … SET ser, encoding` is due. */
  rowSer: string;
  rowType: SchemaType;
  /**
   * Fast path: the last (serType, schemaType) input resolved for this url and a bit per action already resolved
   * with it. Resolution is idempotent once its inputs were accepted, so a repeat of them skips it entirely.
   */
  memoSer: string;
  memoType: SchemaType;
  memoActions: number;
}

type SavedUrl = [count: number, size: number, firstTs: number, lastTs: number, rowSer: string, rowType: SchemaType];

/** Everything a failed transaction must undo, taken at `BEGIN` (format reference §2.7, failure handling). */
export interface FileSnapshot {
  rows: number;
  bytes: number;
  lastTs: number;
  urls: Map<FileUrl, SavedUrl>;
  schemaKeys: Set<string>;
  recording: RecordingSnapshot;
}

/** The bookkeeping of one `.vdb` file; `VdbFileWriter` owns one and keeps it in step with the SQL it runs. */
export class FileState {
  /** Rows in this file, net of evictions (header `count`). */
  rows = 0;
  /** Accounted (uncompressed) bytes in this file, net of evictions. */
  bytes = 0;
  /** Largest elapsed written to this file (header `duration`). */
  lastTs = 0;
  readonly urls = new Map<string, FileUrl>();
  /** `urls` by the recording's url id (`BackendWriter.write`): a frame finds its url without hashing it. */
  readonly byUrlId = new UrlIdCache((url) => this.urls.get(url));
  readonly byId = new Map<number, FileUrl>();
  /** `name 0x1F family` of every schema row in this file. */
  readonly schemaKeys = new Set<string>();

  snapshot(recording: RecordingSnapshot): FileSnapshot {
    const urls = new Map<FileUrl, SavedUrl>();
    for (const u of this.urls.values()) urls.set(u, [u.count, u.size, u.firstTs, u.lastTs, u.rowSer, u.rowType]);
    return {
      rows: this.rows,
      bytes: this.bytes,
      lastTs: this.lastTs,
      urls,
      schemaKeys: new Set(this.schemaKeys),
      recording,
    };
  }

  /** Back to `s`: urls first seen since are forgotten, memos are cleared so the next frame resolves afresh. */
  restore(s: FileSnapshot): void {
    this.rows = s.rows;
    this.bytes = s.bytes;
    this.lastTs = s.lastTs;
    // Urls first seen since are forgotten below; the cache may still hold them.
    this.byUrlId.clear();
    for (const [url, fu] of this.urls) {
      const saved = s.urls.get(fu);
      if (saved === undefined) {
        this.urls.delete(url);
        this.byId.delete(fu.id);
        continue;
      }
      [fu.count, fu.size, fu.firstTs, fu.lastTs, fu.rowSer, fu.rowType] = saved;
      fu.memoActions = 0;
    }
    this.schemaKeys.clear();
    for (const k of s.schemaKeys) this.schemaKeys.add(k);
  }
}
