import type { BackendReader } from '../backend/backend.js';
import { isRemotePath } from '../backend/byte-source.js';
import { guardFile } from '../backend/file-guard.js';
import { openUrlReader } from '../backend/open-source.js';
import type { ReaderOptions } from '../model/config.js';
import type { UrlMeta } from '../model/info.js';
import type { ManifestFlavor } from './manifest.js';
import type { SplitFiles } from './split-files.js';

/** What a backend supplies to read its split format: how to open one segment. */
export interface SplitReaderFormat {
  readonly flavor: ManifestFlavor;
  /** `Info.storageType`: `SQLite3`, `vcap`. */
  readonly storageType: string;
  /** How segment files end (`.vdb`, `.vcap`): to find the one an interrupted recording left out of the manifest. */
  readonly segmentExtension: string;
  openSegment(path: string, options: ReaderOptions): Promise<BackendReader>;
  /**
   * Opens one segment at once, a local path or a url (through `openByteSourceSync`): lets the reader open a segment
   * only when a read reaches it, when the manifest says what each segment holds. Absent: every segment is opened at
   * open, as VLink does.
   */
  openSegmentSync?(path: string, options: ReaderOptions): BackendReader;
  /** What a local segment must pass before `openSegmentSync` opens it (run for every listed segment at open). */
  guardSegment?(path: string, options: ReaderOptions): Promise<void>;
  /**
   * Puts every segment on the first segment's time base (`.vcapx`: timestamps are relative to each segment's
   * `start_timestamp`, and VLink takes the recording's from the first segment). `.vdbx` elapsed values already are.
   */
  readonly rebaseOnFirstSegment?: boolean;
  /** Url metas as the single-file reader orders them (`.vdb` by url then index; `.vcap` by index). */
  sortUrls?(urls: UrlMeta[]): UrlMeta[];
}

export interface SplitReaderOptions extends ReaderOptions {
  /** Default: `node:fs`. */
  files?: SplitFiles;
}

/**
 * How the segments of the recording at `path` are opened: behind a url (`s3://`, files from `urlSplitFiles`) each
 * through a byte source of its own; confined (a server of untrusted folders) only once the segment resolves inside
 * `confineTo`; else as the backend opens a local file.
 */
export function segmentOpening(
  unguarded: SplitReaderFormat,
  path: string,
  confineTo: string | undefined,
): SplitReaderFormat {
  if (isRemotePath(path)) {
    const { guardSegment: _, ...remote } = unguarded;
    return { ...remote, openSegment: openUrlReader };
  }
  if (confineTo === undefined) return unguarded;
  return {
    ...unguarded,
    openSegment: async (segment, segmentOptions) => {
      await guardFile(segment, { confineTo, role: 'segment' });
      return unguarded.openSegment(segment, segmentOptions);
    },
    guardSegment: async (segment, segmentOptions) => {
      await guardFile(segment, { confineTo, role: 'segment' });
      await unguarded.guardSegment?.(segment, segmentOptions);
    },
  };
}
