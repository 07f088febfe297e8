import type { BackendReader, CursorQuery } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { ReaderOptions } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info, UrlMeta } from '../model/info.js';
import { schemaTypeLabel } from '../model/schema-type.js';
import type { ManifestFlavor } from './manifest.js';
import { parseManifest, type ParsedManifest } from './manifest-parse.js';
import { SegmentChain, startSegment, type SequencedSegment } from './segment-sequence.js';
import { nodeSplitFiles, splitPath, type SplitFiles } from './split-files.js';

/** What a backend supplies to read its split format: how to open one segment. */
export interface SplitReaderFormat {
  readonly flavor: ManifestFlavor;
  /** `Info.storageType`: `SQLite3`, `vcap`. */
  readonly storageType: string;
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

/** Manifests are small; a multi-hundred-MiB "manifest" is some other file. */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/**
 * Reads a split recording as one bag (spec §4.4, §6): totals from the manifest, segments in manifest order, each
 * segment's url ids resolved through its own tables (the segment readers do that), schemas merged.
 *
 * Bad input: a missing manifest is `NOT_FOUND`; garbled JSON, a wrong shape or a segment entry that is a path is
 * `CORRUPT_FILE`; a listed segment that does not exist is `NOT_FOUND` naming it (VLink aborts the open). A segment
 * that exists but does not open is `CORRUPT_FILE` (VLink skips it with a warning; `tryToFix: true` does that here,
 * and the bag then reports `hasCompleted: false`).
 */
export class SplitReader implements BackendReader {
  readonly path: string;
  private readonly sequence: SequencedSegment[];
  private readonly endsMs: number[];
  private readonly infoValue: Info;
  private readonly skipped: number;
  private closed = false;

  private constructor(path: string, sequence: SequencedSegment[], info: Info, skipped: number) {
    this.path = path;
    this.sequence = sequence;
    this.infoValue = info;
    this.skipped = skipped;
    this.endsMs = sequence.map((s) => s.reader.info().totalDuration + Math.trunc(s.offsetUs / 1000));
  }

  static async open(path: string, format: SplitReaderFormat, options: SplitReaderOptions = {}): Promise<SplitReader> {
    const files = options.files ?? (await nodeSplitFiles());
    const { files: _f, ...readerOptions } = options;
    const size = files.size(path);
    if (size < 0) throw new BagError('NOT_FOUND', `no such .${format.flavor} manifest`, { file: path });
    if (size > MAX_MANIFEST_BYTES) throw new BagError('CORRUPT_FILE', `a ${size}-byte file is not a manifest`, { file: path });
    let text: string;
    try {
      text = files.readText(path);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot read the manifest', { file: path });
    }
    const manifest = parseManifest(text, path, format.flavor);
    const { dir } = splitPath(path);
    // Every listed segment must exist before any is opened (VLink aborts on a missing one).
    for (const name of manifest.files) {
      if (files.size(dir + name) < 0) throw new BagError('NOT_FOUND', `segment "${name}" listed in the manifest does not exist`, { file: dir + name });
    }
    const opened: Array<{ reader: BackendReader; size: number }> = [];
    let skipped = 0;
    try {
      for (const name of manifest.files) {
        const segmentPath = dir + name;
        try {
          opened.push({ reader: await format.openSegment(segmentPath, readerOptions), size: files.size(segmentPath) });
        } catch (error) {
          if (readerOptions.tryToFix === true) {
            skipped++;
            continue;
          }
          if (BagError.isInstance(error) && (error.code === 'VERSION_MISMATCH' || error.code === 'DRIVER_MISSING')) throw error;
          throw BagError.wrap(error, 'CORRUPT_FILE', `segment "${name}" listed in the manifest cannot be read`, { file: segmentPath });
        }
      }
      if (opened.length === 0) {
        throw new BagError('CORRUPT_FILE', manifest.files.length === 0 ? 'the manifest lists no segments' : 'no segment of the manifest could be opened', { file: path });
      }
    } catch (error) {
      for (const o of opened) o.reader.close();
      throw error;
    }
    const firstStart = opened[0]!.reader.info().startTimestamp;
    const sequence = opened.map((o) => ({
      reader: o.reader,
      offsetUs: format.rebaseOnFirstSegment ? (o.reader.info().startTimestamp - firstStart) * 1000 : 0,
    }));
    const info = buildInfo(path, format, manifest, opened, skipped);
    return new SplitReader(path, sequence, info, skipped);
  }

  info(): Info {
    this.assertOpen();
    return this.infoValue;
  }

  /** The segments' readers, manifest order (for maintenance and tests). */
  get segments(): readonly BackendReader[] {
    return this.sequence.map((s) => s.reader);
  }

  /** Every segment's schemas; a (name, family) pair seen in an earlier segment is kept once. */
  schemas(): SchemaData[] {
    this.assertOpen();
    const seen = new Set<string>();
    const out: SchemaData[] = [];
    for (const { reader } of this.sequence) {
      for (const schema of reader.schemas()) {
        const key = `${schema.name}\x1f${schemaTypeLabel(schema.schemaType)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(schema);
      }
    }
    return out;
  }

  /**
   * Frames of every segment in manifest order. A window starts in the segment spec §7.3 picks; the bounds (and the
   * url filter) then apply to every segment read (§7.5).
   */
  frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.assertOpen();
    return new SegmentChain(this.sequence, startSegment(this.endsMs, query.beginUs), query);
  }

  /** True when every segment passes its own check and none was skipped at open. */
  async check(): Promise<boolean> {
    this.assertOpen();
    if (this.skipped > 0) return false;
    for (const { reader } of this.sequence) if (!reader.check || !(await reader.check())) return false;
    return true;
  }

  async reindex(): Promise<boolean> {
    this.assertOpen();
    let ok = true;
    for (const { reader } of this.sequence) ok = (reader.reindex ? await reader.reindex() : false) && ok;
    return ok;
  }

  async fix(rebuild: boolean): Promise<boolean> {
    this.assertOpen();
    let ok = true;
    for (const { reader } of this.sequence) ok = (reader.fix ? await reader.fix(rebuild) : false) && ok;
    return ok;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    let first: unknown;
    for (const { reader } of this.sequence) {
      try {
        reader.close();
      } catch (error) {
        first ??= error;
      }
    }
    if (first !== undefined) throw BagError.wrap(first, 'IO_ERROR', 'cannot close a segment', { file: this.path });
  }

  private assertOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }
}

function buildInfo(
  path: string,
  format: SplitReaderFormat,
  m: ParsedManifest,
  opened: ReadonlyArray<{ reader: BackendReader; size: number }>,
  skipped: number,
): Info {
  const segmentInfos = opened.map((o) => o.reader.info());
  // The first message's offset: the earliest over segments that hold messages (an empty segment has no first row).
  const withMessages = segmentInfos.filter((i) => i.messageCount > 0);
  const blankDuration = withMessages.length > 0 ? Math.min(...withMessages.map((i) => i.blankDuration)) : 0;
  const urls = format.sortUrls ? format.sortUrls(m.urls) : m.urls;
  return {
    path,
    format: format.flavor,
    version: m.version ? `${m.version.major}.${m.version.minor}.${m.version.patch}` : segmentInfos[0]!.version,
    storageType: format.storageType,
    messageCount: m.count,
    totalDuration: Math.trunc(m.duration / 1000),
    blankDuration,
    timeAccuracy: m.accuracy,
    compressionType: m.compress,
    processName: m.process,
    dateTime: m.date,
    tagName: m.tag,
    hasCompleted: m.complete && skipped === 0,
    timezone: m.timezone,
    startTimestamp: m.startTimestamp,
    splitCount: opened.length,
    splitBySize: m.splitBySize,
    splitByTime: m.splitByTime,
    hasSchema: segmentInfos.some((i) => i.hasSchema),
    totalRawSize: m.urls.reduce((sum, u) => sum + u.size, 0),
    fileSize: opened.reduce((sum, o) => sum + Math.max(0, o.size), 0),
    urls,
  };
}
