import { BagError } from '../errors.js';
import { checkWriterSettings } from './config-check.js';

/** VLink `BagWriter::CompressType` (format reference §10.3). */
export enum CompressType {
  None = 0,
  /** LZAV per message for `.vdb`, zstd chunks for `.vcap`. */
  Auto = 1,
  Zstd = 2,
  Lz4 = 3,
  Lzav = 4,
}

export type CompressName = 'none' | 'auto' | 'zstd' | 'lz4' | 'lzav';

const NAMES: Record<CompressName, CompressType> = {
  none: CompressType.None,
  auto: CompressType.Auto,
  zstd: CompressType.Zstd,
  lz4: CompressType.Lz4,
  lzav: CompressType.Lzav,
};

export function parseCompress(value: CompressType | CompressName | undefined): CompressType {
  if (value === undefined) return CompressType.None;
  const found =
    typeof value === 'number'
      ? Object.values(NAMES).find((type) => type === value)
      : typeof value === 'string'
        ? NAMES[value.toLowerCase() as CompressName]
        : undefined;
  if (found === undefined)
    throw new BagError(
      'INVALID_ARGUMENT',
      `unknown compression ${JSON.stringify(value) ?? String(value)} (none, auto, zstd, lz4, lzav or 0–4)`,
    );
  return found;
}

/**
 * `BagWriter.Config` (VLink `BagWriter::Config`, format reference §1.2, camelCase). Sizes are bytes, times ms.
 * Fields marked "not yet" are accepted and documented but only take effect once their feature lands.
 */
export interface WriterConfig {
  /** Header tag; empty → env `VLINK_BAG_TAG` → `"Empty"`. */
  tagName: string;
  compress: CompressType | CompressName;
  walMode: boolean;
  /** `.vdb`: evict the oldest rows once a limit is hit instead of rejecting new ones. */
  enableLimit: boolean;
  splitNameByTime: boolean;
  /**
   * Split recordings: a new segment may replace a file already at its name (VLink, the default). `false` (beyond
   * VLink, for tools that promise not to overwrite, such as the CLI without `--force`) makes opening such a segment
   * fail with `IO_ERROR` naming the file, which is left as it was; the recording then stops there.
   */
  overwriteSegments: boolean;
  /** Write on the caller's thread (no queue, no commit timer). */
  syncMode: boolean;
  optimizeOnExit: boolean;
  /**
   * `.vcap`: each chunk's CRC and the data-section CRC, verified by readers and `check()`. On by default here (VLink's
   * default is off; a VLink reader reads either); `false` writes neither.
   */
  enableChunkCrc: boolean;
  maxRowCount: number;
  maxBytesSize: number;
  splitBySize: number;
  splitByTime: number;
  maxSplitCount: number;
  beginTime: number;
  /** `.vdb`: commit threshold; `.vcap`: chunk size. */
  cacheSize: number;
  compressStartSize: number;
  compressLevel: number;
  maxTaskDepth: number;
  maxMemorySize: number;
  /** Recording start (ms since epoch) when > 0; else the wall clock at construction. */
  startTimestamp: number;
  ignoreCompressUrls: Iterable<string>;
  /** Header process name (beyond VLink, for copies such as `clone`); default the running program's basename. */
  processName?: string;
  /** Header timezone in minutes east of UTC (beyond VLink, for copies); default the local one at the start. */
  timezone?: number;
  /**
   * Records of a source file to store beside the frames (beyond VLink, for `clone`/`merge` of foreign files): its
   * metadata records and attachments. Only formats that have such records store them (plain `.mcap`); others ignore
   * them.
   */
  carry?: CarriedRecords;
}

/** What `WriterConfig.carry` hands to a backend: a source's metadata records and attachments, bytes included. */
export interface CarriedRecords {
  metadata?: ReadonlyArray<{ readonly name: string; readonly values: Readonly<Record<string, string>> }>;
  attachments?: ReadonlyArray<CarriedAttachment>;
  /** The source's payload encoding per url (`UrlMeta.encoding`: `ros1`, `cdr`, `json`, …) where it names one. */
  urlEncodings?: Readonly<Record<string, string>>;
}

export interface CarriedAttachment {
  name: string;
  mediaType: string;
  /** ns since the Unix epoch as a decimal string (as `AttachmentMeta` gives it). */
  logTime: string;
  createTime: string;
  data: Uint8Array;
}

const GiB = 1024 * 1024 * 1024;

export const DEFAULT_WRITER_CONFIG: Readonly<WriterConfig> = Object.freeze({
  tagName: '',
  compress: CompressType.None,
  walMode: false,
  enableLimit: false,
  splitNameByTime: false,
  overwriteSegments: true,
  syncMode: false,
  optimizeOnExit: false,
  enableChunkCrc: true,
  maxRowCount: 5_000_000_000,
  maxBytesSize: 512 * GiB,
  splitBySize: GiB,
  splitByTime: 0,
  maxSplitCount: 0,
  beginTime: 0,
  cacheSize: 4 * 1024 * 1024,
  compressStartSize: 128,
  compressLevel: 3,
  maxTaskDepth: 20000,
  maxMemorySize: 2 * GiB,
  startTimestamp: 0,
  ignoreCompressUrls: [] as string[],
});

/** The config with defaults applied and `compress` normalised; what backends receive. */
export interface ResolvedWriterConfig extends Omit<WriterConfig, 'compress' | 'ignoreCompressUrls'> {
  compress: CompressType;
  ignoreCompressUrls: ReadonlySet<string>;
}

export function resolveWriterConfig(config: Partial<WriterConfig> = {}): ResolvedWriterConfig {
  checkWriterSettings(config);
  return resolveCheckedWriterConfig(config);
}

/** `resolveWriterConfig` for settings `checkWriterSettings` passed already (`BagWriter.create` checks them once). */
export function resolveCheckedWriterConfig(config: Partial<WriterConfig>): ResolvedWriterConfig {
  const merged = { ...DEFAULT_WRITER_CONFIG, ...stripUndefined(config) };
  return {
    ...merged,
    compress: parseCompress(merged.compress),
    ignoreCompressUrls: new Set(merged.ignoreCompressUrls),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Options of `BagReader.create`. */
export interface ReaderOptions {
  /** Open without write access (default true); maintenance (`fix`, `reindex`) needs `false`. */
  readOnly?: boolean;
  /** Open what can be read of a damaged file instead of failing. */
  tryToFix?: boolean;
  /**
   * Check stored checksums while reading (default true): a `.vcap` chunk whose CRC does not match is `CORRUPT_FILE`
   * instead of frames that differ from what was written. `false` skips the check (e.g. to salvage what a damaged
   * chunk still holds); formats without checksums ignore it.
   */
  verifyCrc?: boolean;
  /**
   * A directory every file the reader opens must stay in: the bag, its split segments and sidecar files (a SQLite
   * journal) are resolved to their real paths (symbolic links followed) and refused when they lead outside it. For
   * servers of untrusted folders; anything that is not a regular file (a FIFO, device or socket) is refused anyway.
   */
  confineTo?: string;
}
