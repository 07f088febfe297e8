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
  if (isRemotePath(path)) return { ...unguarded, openSegment: openUrlReader };
  if (confineTo === undefined) return unguarded;
  return {
    ...unguarded,
    openSegment: async (segment, segmentOptions) => {
      await guardFile(segment, { confineTo, role: 'segment' });
      return unguarded.openSegment(segment, segmentOptions);
    },
  };
}
