import type { BackendWriter, RecordingContext } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { formatVlinkDate } from '../model/time-format.js';
import { serializeManifest, type ManifestFlavor, type ManifestUrl, type SplitManifest } from './manifest.js';
import { refuseExistingSegment, removeOldRecording } from './existing-files.js';
import { entryFacts, SegmentLedger, urlFrequency, type SegmentStats } from './segment-ledger.js';
import type { SegmentFacts } from './segment-facts.js';
import { sanitizeCounterTable } from '../writer/drop-counters.js';
import { SegmentNamer } from './segment-naming.js';
import { directoryOf, nodeSplitFiles, splitPath, stemOf, type SplitFiles } from './split-files.js';
import { manifestSplitBySize, shouldSplit, splitRuleOf, type SplitRule } from './split-policy.js';

/** One open segment file, as a backend's split adapter exposes it. Synchronous, like `BackendWriter`. */
export interface SegmentWriter {
  readonly path: string;
  /**
   * Stores a frame; throws like `BackendWriter.write` (the frame is then not stored). `urlId` is the recording's, so
   * it is the same in every segment (`BackendWriter.write`).
   */
  write(frame: Frame, urlId: number): void;
  writeSchema(schema: SchemaData): void;
  commit(): void;
  tick(): void;
  /** Finishes the segment file (header `complete`, summaries). */
  close(): void;
  /** The recording's drop counters, stored in this segment when it closes (see `BackendWriter.setCounters`). */
  setCounters?(table: Record<string, Record<string, number>>): void;
  /** Urls (`.vdb`) or channels (`.vcap`) the segment holds: splits are considered only from 1 on. */
  urlCount(): number;
  /** Accounted (uncompressed) payload bytes in the segment, net of evictions. */
  bytes(): number;
  /**
   * True when the segment's row/byte limit is already exceeded (format reference §2.8). VLink's limit loop runs before the split
   * check, so with `enableLimit` off such a frame is rejected by the full segment rather than starting a new one.
   */
  overLimit?(): boolean;
  /** Counters keyed by recording-global url index. */
  stats(): SegmentStats;
}

/**
 * A url (or url + action) as the whole recording knows it; the manifest adds the counters. Its `loss` is the last
 * loss set for the url (−1 unknown), 0 if never set.
 */
export type RecordingUrlIdentity = Omit<ManifestUrl, 'count' | 'size' | 'freq'>;

/** What a backend supplies to write its split format: segment files and the recording-wide url table. */
export interface SplitFormat {
  readonly flavor: ManifestFlavor;
  /** `.vdb` or `.vcap`. */
  readonly segmentExtension: string;
  /** Manifest `compress`: `lzav`/`None` (`.vdbx`), `zstd`/`None` (`.vcapx`). */
  readonly compress: string;
  /** Opens a new segment; `openedAt` (ms since epoch) is its header `date`. */
  openSegment(path: string, openedAt: number): SegmentWriter;
  /** Every url of the recording, global index order. */
  urls(): RecordingUrlIdentity[];
  /** Records a loss for the url recording-wide (the segments write it at close). */
  setUrlLoss(url: string, loss: number): void;
}

export interface SplitWriterOptions {
  path: string;
  config: ResolvedWriterConfig;
  context: RecordingContext;
  format: SplitFormat;
  /** Default: `node:fs`. */
  files?: SplitFiles;
  /** Non-fatal problems (an old manifest that does not parse, a segment that could not be deleted). */
  warn?: (message: string) => void;
}

const defaultWarn = (message: string): void => console.warn(`vlink-bag: ${message}`);

/**
 * Writes a split recording (`.vdbx`, `.vcapx`; format reference §4.2–§4.3, §6) through a backend's `SplitFormat`: the manifest
 * at construction, after every split and at close; segment naming; the size/time split decision; the split callback
 * sequence; `maxSplitCount` retention with recomputed totals; clean-up of an old recording at the same path.
 */
export class SplitWriter implements BackendWriter {
  readonly path: string;
  private readonly config: ResolvedWriterConfig;
  private readonly context: RecordingContext;
  private readonly format: SplitFormat;
  private readonly files: SplitFiles;
  private readonly warn: (message: string) => void;
  private readonly rule: SplitRule;
  private readonly namer: SegmentNamer;
  private readonly ledger: SegmentLedger;
  private readonly dir: string;
  private current: SegmentWriter | undefined;
  private lastFile = '';
  private index = 0;
  private started = false;
  private closed = false;
  private failure: BagError | undefined;

  private constructor(options: SplitWriterOptions & { files: SplitFiles }) {
    this.path = options.path;
    this.config = options.config;
    this.context = options.context;
    this.format = options.format;
    this.files = options.files;
    this.warn = options.warn ?? defaultWarn;
    this.rule = splitRuleOf(options.config);
    const { dir, name } = splitPath(options.path);
    this.dir = dir;
    this.namer = new SegmentNamer({
      stem: stemOf(name),
      extension: options.format.segmentExtension,
      byTime: options.config.splitNameByTime,
    });
    this.ledger = new SegmentLedger(Math.max(0, Math.trunc(options.config.maxSplitCount)));
  }

  /**
   * Starts the recording: removes the segments of an old manifest at this path (bare names only) and the manifest,
   * writes the initial manifest (`complete: false`, no files), then opens the first segment.
   */
  static async create(options: SplitWriterOptions): Promise<SplitWriter> {
    const files = options.files ?? (await nodeSplitFiles());
    return SplitWriter.open({ ...options, files });
  }

  /** `create` with the file seam already at hand (synchronous). */
  static open(options: SplitWriterOptions & { files: SplitFiles }): SplitWriter {
    const writer = new SplitWriter(options);
    writer.start();
    return writer;
  }

  write(frame: Frame, urlId: number): void {
    const segment = this.segment();
    if (!this.started) {
      // VLink step 2 of §2.7: the first write announces segment 0 to `before = false` callbacks.
      this.started = true;
      this.notify(0, segment.path, false);
    }
    if (
      segment.urlCount() >= 1 &&
      !(!this.config.enableLimit && segment.overLimit?.() === true) &&
      shouldSplit(this.rule, this.index, segment.bytes(), frame.timestamp, frame.data.length)
    ) {
      this.split(frame.timestamp);
    }
    this.segment().write(frame, urlId);
  }

  writeSchema(schema: SchemaData): void {
    this.segment().writeSchema(schema);
  }

  setUrlLoss(url: string, loss: number): void {
    this.format.setUrlLoss(url, loss);
  }

  commit(): void {
    if (!this.closed) this.current?.commit();
  }

  tick(): void {
    if (!this.closed) this.current?.tick();
  }

  currentFile(): string {
    return this.current?.path ?? this.lastFile;
  }

  /**
   * The recording's counters by cause: handed to the open segment at once (it stores them at its metadata refresh),
   * to every segment opened later, and at close (readers take the last segment's).
   */
  setCounters(table: Record<string, Record<string, number>>): void {
    this.counters = table;
    this.current?.setCounters?.(table);
  }
  private counters: Record<string, Record<string, number>> | undefined;

  /** Closes the open segment, then writes the final manifest (`complete: true` unless something failed). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    let error: BagError | undefined;
    const segment = this.current;
    this.current = undefined;
    if (segment) {
      const stats = segment.stats();
      try {
        if (this.counters) segment.setCounters?.(this.counters);
        segment.close();
      } catch (cause) {
        error = BagError.wrap(cause, 'IO_ERROR', 'cannot close segment', { file: segment.path });
      }
      this.ledger.close(stats, this.storedCounters());
    }
    try {
      this.writeManifest(error === undefined && this.failure === undefined);
    } catch (cause) {
      error ??= BagError.wrap(cause, 'IO_ERROR', 'cannot write the manifest', { file: this.path });
    }
    if (error) throw error;
  }

  /** The manifest as it would be written now. */
  manifest(complete: boolean): SplitManifest {
    const open = this.current && !this.closed ? this.current.stats() : undefined;
    const totals = this.ledger.totals(open);
    const retaining = this.config.maxSplitCount > 0;
    const urls: ManifestUrl[] = [];
    for (const u of this.format.urls()) {
      const c = totals.urls.get(u.index) ?? { count: 0, size: 0, firstTs: -1, lastTs: -1 };
      // With retention, totals cover the kept segments only and urls left with nothing are omitted (format reference §4.1).
      if (retaining && c.count === 0) continue;
      urls.push({
        index: u.index,
        url: u.url,
        type: u.type,
        ...(u.action === undefined ? {} : { action: u.action }),
        ser: u.ser,
        encoding: u.encoding,
        count: c.count,
        size: c.size,
        loss: u.loss,
        freq: urlFrequency(c),
      });
    }
    const v = this.context.version;
    return {
      header: {
        major: v.major,
        minor: v.minor,
        patch: v.patch,
        count: totals.rows,
        duration: Math.max(0, totals.maxTs),
        accuracy: 'MicroSecond',
        compress: this.format.compress,
        process: this.context.processName,
        date: formatVlinkDate(this.context.startTimestamp),
        tag: this.context.tagName,
        splitBySize: manifestSplitBySize(this.rule),
        splitByTime: this.rule.splitByTime,
        complete,
        timezone: this.context.timezone,
        startTimestamp: this.context.startTimestamp,
      },
      urls,
      files: this.ledger.closedNames(),
      ...this.segmentFacts(),
    };
  }

  /**
   * What each closed segment holds (`VLinkBagSegments`), when the segment writer reports it all (first timestamp,
   * schemas): readers then answer `info` and find a time without opening segments.
   */
  private segmentFacts(): { segments?: SegmentFacts[] } {
    const closed = this.ledger.closed();
    const segments: SegmentFacts[] = [];
    for (const entry of closed) {
      const facts = entryFacts(entry);
      if (!facts) return {};
      segments.push(facts);
    }
    return { segments };
  }

  /** The drop counters a segment closed now stores (the table it was handed, as readers read it back), if any. */
  private storedCounters(): Record<string, Record<string, number>> | undefined {
    if (!this.counters) return undefined;
    const table = sanitizeCounterTable(this.counters);
    return Object.keys(table).length > 0 ? table : undefined;
  }

  // ---------------------------------------------------------------------------------------------------------------

  private start(): void {
    try {
      this.files.ensureDir(directoryOf(this.path));
      removeOldRecording(this.files, this.path, this.dir, this.warn, (path) => this.removeQuietly(path));
      this.writeManifest(false);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot create the manifest', { file: this.path });
    }
    const start = this.context.startTimestamp;
    const name = this.namer.name(0, start);
    const path = this.dir + name;
    try {
      refuseExistingSegment(this.files, path, this.config.overwriteSegments);
      this.current = this.format.openSegment(path, start);
    } catch (error) {
      this.files.remove(this.path);
      throw error;
    }
    this.lastFile = path;
    this.ledger.open(name, path, start);
  }

  /** The split sequence of format reference §4.3. */
  private split(timestampUs: number): void {
    const old = this.segment();
    const index = this.index + 1;
    const openedAt = this.context.startTimestamp + Math.trunc(timestampUs / 1000);
    const name = this.namer.name(index, openedAt);
    const path = this.dir + name;
    this.notify(index, path, true);

    const stats = old.stats();
    this.current = undefined;
    try {
      old.close();
    } catch (error) {
      this.ledger.close(stats, this.storedCounters());
      throw this.fail(BagError.wrap(error, 'IO_ERROR', 'cannot close segment before a split', { file: old.path }));
    }
    this.ledger.close(stats, this.storedCounters());

    let segment: SegmentWriter;
    try {
      refuseExistingSegment(this.files, path, this.config.overwriteSegments);
    } catch (error) {
      // Not ours to remove: the file that is there stays as it was.
      throw this.fail(error as BagError);
    }
    try {
      segment = this.format.openSegment(path, openedAt);
    } catch (error) {
      // VLink rolls the list back and removes the new file.
      this.removeQuietly(path);
      throw this.fail(BagError.wrap(error, 'IO_ERROR', 'cannot open the next segment', { file: path }));
    }
    this.current = segment;
    if (this.counters) segment.setCounters?.(this.counters);
    this.lastFile = path;
    this.index = index;
    const dropped = this.ledger.open(name, path, this.context.startTimestamp);
    try {
      this.writeManifest(false);
    } catch (error) {
      throw this.fail(
        BagError.wrap(error, 'IO_ERROR', 'cannot rewrite the manifest after a split', { file: this.path }),
      );
    }
    for (const entry of dropped) this.removeQuietly(entry.path);
    this.notify(index, path, false);
  }

  private writeManifest(complete: boolean): void {
    this.files.writeText(this.path, serializeManifest(this.manifest(complete), this.format.flavor));
  }

  private segment(): SegmentWriter {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.path });
    if (!this.current) throw this.failure ?? new BagError('IO_ERROR', 'no segment is open', { file: this.path });
    return this.current;
  }

  private fail(error: BagError): BagError {
    this.failure ??= error;
    return error;
  }

  private notify(index: number, file: string, before: boolean): void {
    try {
      this.context.onSplit?.(index, file, before);
    } catch (error) {
      // A throwing user callback must not break the recording; it is reported, not swallowed.
      this.warn(
        `split callback failed (index ${index}, ${file}): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private removeQuietly(path: string): void {
    try {
      this.files.remove(path);
    } catch (error) {
      this.warn(`cannot delete ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
