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
  /** `localCopy` done at once (the thread waits): a split recording's segment opened when a read reaches it. */
  localCopySync?(extension: string): string;
  close(): void;
}

export type ByteSourceOpener = (url: string) => Promise<ByteSource>;

/** One object under a url prefix (`UrlScheme.list`). */
export interface UrlEntry {
  /** The object's full url (`s3://bucket/dir/drive.vcap`). */
  url: string;
  size: number;
  /** Last modification, ms since the Unix epoch (0 when the store does not say). */
  mtimeMs: number;
}

/**
 * A recording written to a url: the writer writes a local staging copy at `localPath`, hands over each finished
 * file of a split recording as it is closed, and `commit()` uploads what is left (the manifest last). An upload that
 * fails leaves no object presented as complete, and the staging copy is kept (the error names it).
 */
export interface UrlStaging {
  /** Where the backend writes (a local file with the url's name and extension). */
  readonly localPath: string;
  /**
   * A split recording closed segment `closed` (a path or name in the staging folder): it is final, its upload starts
   * now. Only that file: when the writer runs in a worker, the notice can arrive after later splits, so any newer
   * segment in the folder may still be open.
   */
  segmentClosed(closed: string): void;
  /** Uploads the rest (segments, the bag or manifest, a sidecar), then removes the staging copy. */
  commit(): Promise<void>;
}

/** What a package that reaches a kind of url (`s3://`) offers: reading, and optionally listing and writing. */
export interface UrlScheme {
  open: ByteSourceOpener;
  /**
   * Opens a source at once (the thread waits for the store): lets a split recording open a segment only when a
   * synchronous read reaches it. Absent: such recordings open every segment up front.
   */
  openSync?(url: string): ByteSource;
  /** Every object whose url starts with `prefix` (recursively). */
  list?(prefix: string): Promise<UrlEntry[]>;
  /** A staging copy for a recording written to `url` (`BagWriter.create('s3://…')`). */
  stage?(url: string): Promise<UrlStaging>;
}

const schemes = new Map<string, UrlScheme>();

/**
 * Makes `<scheme>://…` paths readable through `opener`; the listing and staging the scheme already has (e.g. from
 * `@vlink/bag-s3`'s `registerS3()`) are kept.
 */
export function registerByteSourceScheme(scheme: string, opener: ByteSourceOpener): void {
  registerUrlScheme(scheme, { ...schemes.get(scheme.toLowerCase()), open: opener });
}

/** Makes `<scheme>://…` paths readable, listable (`serve`) and writable (`BagWriter`) as the scheme offers. */
export function registerUrlScheme(scheme: string, handler: UrlScheme): void {
  schemes.set(scheme.toLowerCase(), handler);
}

/** The url's scheme when the path is a url (`s3://…`), else undefined (a local path, also `C:\…` on Windows). */
export function urlScheme(path: string): string | undefined {
  return /^([a-z][a-z0-9+.-]+):\/\//i.exec(path)?.[1]?.toLowerCase();
}

/** True for a url a registered scheme (not `file://`) stands for; false for a local path. */
export function isRemotePath(path: string): boolean {
  const scheme = urlScheme(path);
  return scheme !== undefined && scheme !== 'file';
}

/** The scheme's handler; `NOT_SUPPORTED` when none is registered. */
export function urlSchemeOf(path: string): UrlScheme {
  const scheme = urlScheme(path) ?? '';
  const handler = schemes.get(scheme);
  if (!handler) {
    throw new BagError(
      'NOT_SUPPORTED',
      `no reader for ${scheme}:// urls is registered (s3://: call registerS3() of @vlink/bag-s3)`,
      { file: path },
    );
  }
  return handler;
}

/** Opens a registered scheme's source; undefined for a local path; `NOT_SUPPORTED` for an unregistered scheme. */
export async function openByteSource(path: string): Promise<ByteSource | undefined> {
  if (!isRemotePath(path)) return undefined;
  return urlSchemeOf(path).open(path);
}

/** True when the url's scheme opens sources at once (`UrlScheme.openSync`). */
export function canOpenByteSourceSync(path: string): boolean {
  return isRemotePath(path) && schemes.get(urlScheme(path) ?? '')?.openSync !== undefined;
}

/** Opens a registered scheme's source at once; `NOT_SUPPORTED` when the scheme cannot (or is not registered). */
export function openByteSourceSync(path: string): ByteSource {
  const handler = urlSchemeOf(path);
  if (!handler.openSync)
    throw new BagError('NOT_SUPPORTED', `${urlScheme(path)}:// sources cannot be opened synchronously`, { file: path });
  return handler.openSync(path);
}

/** The objects under a url prefix; `NOT_SUPPORTED` when the scheme cannot list. */
export async function listUrl(prefix: string): Promise<UrlEntry[]> {
  const handler = urlSchemeOf(prefix);
  if (!handler.list)
    throw new BagError('NOT_SUPPORTED', `${urlScheme(prefix)}:// urls cannot be listed`, { file: prefix });
  return handler.list(prefix);
}

/** A staging copy for writing to a url; `NOT_SUPPORTED` when the scheme is read-only. */
export async function stageUrl(url: string): Promise<UrlStaging> {
  const handler = urlSchemeOf(url);
  if (!handler.stage) throw new BagError('NOT_SUPPORTED', `${urlScheme(url)}:// urls are read-only`, { file: url });
  return handler.stage(url);
}
