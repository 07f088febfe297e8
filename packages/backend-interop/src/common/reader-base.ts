import {
  BagError,
  type BackendReader,
  type CursorQuery,
  type Frame,
  type Info,
  type SchemaData,
} from '@vlink/bag-core';
import { copyInfo } from './foreign-info.js';

/**
 * What every foreign reader shares: the Info and schemas it built at open, the closed state, and the url filter of
 * a query resolved to the reader's own keys (connection, channel or message ids).
 */
export abstract class ForeignReader implements BackendReader {
  protected closed = false;

  constructor(
    readonly path: string,
    protected readonly facts: Info,
    protected readonly schemaList: SchemaData[],
  ) {}

  info(): Info {
    return copyInfo(this.facts);
  }

  schemas(): SchemaData[] {
    return this.schemaList.map((s) => ({ ...s }));
  }

  abstract frames(query: CursorQuery): IterableIterator<Frame>;

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
  }

  /** Frees files and handles (once). */
  protected abstract release(): void;

  protected ensureOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }
}

/** The keys whose url the query keeps (all when it names none); an empty result means nothing matches. */
export function keysForUrls<K>(urlOf: ReadonlyMap<K, string>, urls: readonly string[] | undefined): K[] | undefined {
  if (urls === undefined) return undefined;
  const wanted = new Set(urls);
  return [...urlOf].filter(([, url]) => wanted.has(url)).map(([key]) => key);
}
