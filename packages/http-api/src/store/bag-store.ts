import { BagReader, type Info, type SchemaData } from '@vlink/bag';
import { PayloadDecoder } from '@vlink/bag-decode';
import type { BagPlace } from './bag-place.js';
import type { ResolvedBag } from './resolve-id.js';

/** A reader borrowed from the store; give it back with `release()` (idempotent). */
export interface Lease {
  readonly reader: BagReader;
  /** `reuse: false` closes the reader instead of pooling it (e.g. after playback left state on it). */
  release(reuse?: boolean): void;
}

interface Entry {
  readonly path: string;
  readonly mtimeMs: number;
  readonly size: number;
  readonly idle: BagReader[];
  /** False once evicted or found stale: leased readers are then closed on release instead of pooled. */
  live: boolean;
  info?: Promise<Info>;
  schemas?: Promise<SchemaData[]>;
  decoder?: Promise<PayloadDecoder>;
  /** The decoder of `jsonNames=true` requests. */
  jsonNamesDecoder?: Promise<PayloadDecoder>;
}

export interface BagStoreOptions {
  /** Bags whose readers, info and schemas are kept (LRU). 0 opens a reader per request. Default 16. */
  cacheSize?: number;
  /** Idle readers kept per bag. Default 4. */
  idlePerBag?: number;
  /** Limits of the `decode=true` decoder (payload size, nesting depth). */
  decode?: { maxBytes?: number; maxDepth?: number };
}

/**
 * Resolves ids and lends readers. A reader is never shared by two users at once (a SQLite connection cannot run two
 * cursors, and a lease may outlive the request for a stream or a replay), so the store keeps a small pool of idle
 * readers per bag and opens another when all are out. Entries are keyed by real path and invalidated when the file's
 * size or mtime changes.
 */
export class BagStore {
  private readonly entries = new Map<string, Entry>();
  private readonly cacheSize: number;
  private readonly idlePerBag: number;
  private readonly decodeLimits: { maxBytes?: number; maxDepth?: number };
  private closed = false;

  constructor(
    readonly place: BagPlace,
    options: BagStoreOptions = {},
  ) {
    this.cacheSize = Math.max(0, options.cacheSize ?? 16);
    this.idlePerBag = Math.max(0, options.idlePerBag ?? 4);
    this.decodeLimits = options.decode ?? {};
  }

  resolve(id: string): ResolvedBag {
    return this.place.resolve(id);
  }

  async lease(bag: ResolvedBag): Promise<Lease> {
    const entry = this.entry(bag);
    // A local root confines readers: a split recording's segments and a SQLite journal are refused outside it.
    const reader = entry.idle.pop() ?? (await BagReader.create(bag.path, this.place.readerOptions));
    let released = false;
    return {
      reader,
      release: (reuse = true) => {
        if (released) return;
        released = true;
        if (reuse && entry.live && !this.closed && entry.idle.length < this.idlePerBag) entry.idle.push(reader);
        else reader.close();
      },
    };
  }

  async withReader<T>(bag: ResolvedBag, use: (reader: BagReader) => T | Promise<T>): Promise<T> {
    const lease = await this.lease(bag);
    try {
      return await use(lease.reader);
    } finally {
      lease.release();
    }
  }

  /** The bag's Info with `path` replaced by the id, so server paths never leave the server. */
  async info(bag: ResolvedBag): Promise<Info> {
    const entry = this.entry(bag);
    const info = await this.memo(entry, 'info', () => this.withReader(bag, (r) => r.getInfo()));
    return { ...info, path: bag.id };
  }

  /**
   * The bag's message count and size for a listing, keeping nothing: a listing opens every bag of the tree, and
   * keeping them would push the readers and info of the bags clients are reading out of the LRU. A bag whose entry is
   * cached answers from it.
   */
  async facts(bag: ResolvedBag): Promise<{ messageCount: number; fileSize: number }> {
    const known = this.entries.get(bag.path);
    const cached = known && known.mtimeMs === bag.mtimeMs && known.size === bag.size ? known.info : undefined;
    const info = cached ? await cached : await this.readInfo(bag);
    return { messageCount: info.messageCount, fileSize: info.fileSize };
  }

  schemas(bag: ResolvedBag): Promise<SchemaData[]> {
    return this.memo(this.entry(bag), 'schemas', () => this.withReader(bag, (r) => r.getSchemas()));
  }

  /** The bag's decoder; `jsonNames`: protobuf fields by their JSON name. One of each per file version. */
  decoder(bag: ResolvedBag, jsonNames = false): Promise<PayloadDecoder> {
    return this.memo(
      this.entry(bag),
      jsonNames ? 'jsonNamesDecoder' : 'decoder',
      async () =>
        new PayloadDecoder({
          ...this.decodeLimits,
          ...(jsonNames ? { jsonNames } : {}),
          schemas: await this.schemas(bag),
          urls: (await this.info(bag)).urls,
        }),
    );
  }

  private async readInfo(bag: ResolvedBag): Promise<Info> {
    const reader = await BagReader.create(bag.path, this.place.readerOptions);
    try {
      return await reader.getInfo();
    } finally {
      reader.close();
    }
  }

  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) this.retire(entry);
    this.entries.clear();
  }

  private memo<K extends 'info' | 'schemas' | 'decoder' | 'jsonNamesDecoder'>(
    entry: Entry,
    key: K,
    make: () => NonNullable<Entry[K]>,
  ): NonNullable<Entry[K]> {
    const existing = entry[key];
    if (existing) return existing as NonNullable<Entry[K]>;
    const made = make();
    entry[key] = made;
    // A failure is not cached: the file may be fixed or finish recording.
    (made as Promise<unknown>).catch(() => {
      if (entry[key] === made) entry[key] = undefined;
    });
    return made;
  }

  private entry(bag: ResolvedBag): Entry {
    const existing = this.entries.get(bag.path);
    if (existing && existing.mtimeMs === bag.mtimeMs && existing.size === bag.size) {
      this.entries.delete(bag.path);
      this.entries.set(bag.path, existing);
      return existing;
    }
    if (existing) {
      this.entries.delete(bag.path);
      this.retire(existing);
    }
    const entry: Entry = {
      path: bag.path,
      mtimeMs: bag.mtimeMs,
      size: bag.size,
      idle: [],
      live: this.cacheSize > 0 && !this.closed,
    };
    if (entry.live) {
      this.entries.set(bag.path, entry);
      while (this.entries.size > this.cacheSize) {
        const oldest = this.entries.values().next().value as Entry;
        this.entries.delete(oldest.path);
        this.retire(oldest);
      }
    }
    return entry;
  }

  private retire(entry: Entry): void {
    entry.live = false;
    for (const reader of entry.idle.splice(0)) reader.close();
  }
}
