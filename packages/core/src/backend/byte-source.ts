import { BagError } from '../errors.js';

/**
 * A bag's bytes somewhere other than a local path (object storage, …): random access, synchronous (the backend
 * reader seam is), read-only. Packages that reach such places register an opener for their url scheme; backends that
 * can read from one implement `Backend.openSource`.
 */
export interface ByteSource {
  /** The url the bytes came from (errors and `BagReader.path` name it). */
  readonly name: string;
  size(): number;
  /** Exactly `length` bytes at `offset`; a range outside the source is a `CORRUPT_FILE`. */
  read(offset: number, length: number): Uint8Array;
  /**
   * A local file with the same bytes (a bounded cache), for backends that need a path (SQLite): `BagReader` opens that
   * with the backend's `openReader` when the backend has no `openSource`.
   */
  localCopy?(extension: string): Promise<string>;
  close(): void;
}

export type ByteSourceOpener = (url: string) => Promise<ByteSource>;

const openers = new Map<string, ByteSourceOpener>();

/** Makes `<scheme>://…` paths readable through `opener` (e.g. `s3` by `@vlink/bag-s3`'s `registerS3()`). */
export function registerByteSourceScheme(scheme: string, opener: ByteSourceOpener): void {
  openers.set(scheme.toLowerCase(), opener);
}

/** The url's scheme when the path is a url (`s3://…`), else undefined (a local path, also `C:\…` on Windows). */
export function urlScheme(path: string): string | undefined {
  return /^([a-z][a-z0-9+.-]+):\/\//i.exec(path)?.[1]?.toLowerCase();
}

/** Opens a registered scheme's source; undefined for a local path; `NOT_SUPPORTED` for an unregistered scheme. */
export async function openByteSource(path: string): Promise<ByteSource | undefined> {
  const scheme = urlScheme(path);
  if (scheme === undefined || scheme === 'file') return undefined;
  const opener = openers.get(scheme);
  if (!opener) {
    throw new BagError(
      'NOT_SUPPORTED',
      `no reader for ${scheme}:// urls is registered (s3://: call registerS3() of @vlink/bag-s3)`,
      { file: path },
    );
  }
  return opener(path);
}
