import type { BackendReader, CursorQuery } from '../backend/backend.js';
import { isRemotePath } from '../backend/byte-source.js';
import { guardFile } from '../backend/file-guard.js';
import { BagError } from '../errors.js';
import type { ReaderOptions } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info } from '../model/info.js';
import { schemaKey } from '../model/url-identity.js';
import { compareManifestTotals, compareSegmentFacts } from './manifest-totals.js';
import { parseManifest, type ParsedManifest } from './manifest-parse.js';
import { openSegments, progressWithin, SegmentChain, startSegment, type SequencedSegment } from './segment-sequence.js';
import { type LazySegments, openLazily } from './lazy-segments.js';
import { recordingStart } from './recording-start.js';
import { recordingFacts } from './recovered-facts.js';
import { addRecoveredTotals, repairedManifestText, unlistedSegmentNames } from './segment-recovery.js';
import {
  buildInfo,
  buildInfoFromFacts,
  openEverySync,
  openListed,
  openUnlisted,
  type OpenedSegment,
} from './split-segments.js';
import { segmentOpening, type SplitReaderFormat, type SplitReaderOptions } from './split-format.js';
import { ProblemList, type CheckOptions, type CheckReport } from '../maintenance/check-report.js';
import type { ReindexOptions } from '../maintenance/repair-report.js';
import { nodeSplitFiles, splitPath, type SplitFiles } from './split-files.js';

export type { SplitReaderFormat, SplitReaderOptions } from './split-format.js';

/** Manifests are small; a multi-hundred-MiB "manifest" is some other file. */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/**
 * Reads a split recording as one bag (format reference §4.4, §6): totals from the manifest, segments in manifest order, each
 * segment's url ids resolved through its own tables (the segment readers do that), schemas merged.
 *
 * Bad input: a missing manifest is `NOT_FOUND`; garbled JSON, a wrong shape or a segment entry that is a path is
 * `CORRUPT_FILE`; a listed segment that does not exist is `NOT_FOUND` naming it (VLink aborts the open). A segment
 * that exists but does not open is `CORRUPT_FILE` (VLink skips it with a warning; `tryToFix: true` does that here,
 * and the bag then reports `hasCompleted: false`).
 *
 * When the manifest says what each segment holds (`VLinkBagSegments`, §4.1) no segment is opened at open: `info`
 * comes from the manifest and `LazySegments` opens a segment when a read reaches it (format reference §4.4).
 *
 * Interrupted recordings: the writer lists a segment once it is closed, so a recording that never closed (manifest
 * `complete: false`) has its last segment (two, when it died mid-split) on disk but not listed. `tryToFix: true`
 * reads those too; `fix()` repairs them and adds them to the manifest; `check()` fails while they are unlisted.
 */
export class SplitReader implements BackendReader {
  private sequence: SequencedSegment[] = [];
  private endsMs: number[] = [];
  private infoValue!: Info;
  private closed = false;
  private currentSegment = 0;

  private constructor(
    readonly path: string,
    private readonly format: SplitReaderFormat,
    private readonly files: SplitFiles,
    private readonly options: ReaderOptions,
    private manifest: ParsedManifest,
    private opened: OpenedSegment[],
    /** Unlisted segments found at open but not opened (no `tryToFix`): `fix()` opens, repairs and lists them. */
    private pending: string[],
    /** Why each listed segment left out with `tryToFix` was (it did not open, or it repeats another). */
    private readonly skipped: readonly string[],
    /**
     * Set while segments are opened only when a read reaches them (the manifest says what each holds); undefined
     * when all are open (`opened`), as after a maintenance verb needed them all.
     */
    private lazy?: LazySegments,
  ) {
    this.refresh();
  }

  static async open(
    path: string,
    unguarded: SplitReaderFormat,
    options: SplitReaderOptions = {},
  ): Promise<SplitReader> {
    const files = options.files ?? (await nodeSplitFiles());
    const { files: _f, ...readerOptions } = options;
    const { confineTo } = readerOptions;
    const format = segmentOpening(unguarded, path, confineTo);
    if (confineTo !== undefined && !isRemotePath(path)) await guardFile(path, { confineTo });
    const size = files.size(path);
    if (size < 0) throw new BagError('NOT_FOUND', `no such .${format.flavor} manifest`, { file: path });
    if (size > MAX_MANIFEST_BYTES)
      throw new BagError('CORRUPT_FILE', `a ${size}-byte file is not a manifest`, { file: path });
    let text: string;
    try {
      text = files.readText(path);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot read the manifest', { file: path });
    }
    const manifest = parseManifest(text, path, format.flavor);
    const { dir, name: manifestName } = splitPath(path);
    // Every listed segment must exist before any is opened (VLink aborts on a missing one).
    for (const name of manifest.files) {
      // `exists`, not `size`: a segment that is there but is no regular file (a FIFO) is refused when it is opened,
      // with that reason, rather than reported missing.
      if (!files.exists(dir + name))
        throw new BagError('NOT_FOUND', `segment "${name}" listed in the manifest does not exist`, {
          file: dir + name,
        });
    }
    const unlisted = manifest.complete
      ? []
      : unlistedSegmentNames(files.list(dir), manifestName, format.segmentExtension, manifest.files);
    const tryToFix = readerOptions.tryToFix === true;
    if (manifest.files.length === 0) {
      if (unlisted.length === 0) throw new BagError('CORRUPT_FILE', 'the manifest lists no segments', { file: path });
      if (!tryToFix) {
        throw new BagError(
          'CORRUPT_FILE',
          `the manifest lists no segments; the interrupted recording left ${unlisted.map((n) => `"${n}"`).join(', ')} out of it: open with tryToFix to read, fix() to add`,
          { file: path },
        );
      }
    }
    const lazy = await openLazily(path, dir, manifest, format, readerOptions);
    if (lazy) return new SplitReader(path, format, files, readerOptions, manifest, [], unlisted, [], lazy);
    const opened: OpenedSegment[] = [];
    const skipped: string[] = [];
    try {
      await openListed(manifest.files, dir, format, readerOptions, opened, skipped);
      if (tryToFix) opened.push(...(await openUnlisted(unlisted, dir, format, readerOptions, manifest, opened)));
      if (opened.length === 0) {
        throw new BagError(
          'CORRUPT_FILE',
          manifest.files.length === 0 ? 'the manifest lists no segments' : 'no segment of the manifest could be opened',
          { file: path },
        );
      }
    } catch (error) {
      for (const o of opened) o.reader.close();
      throw error;
    }
    return new SplitReader(path, format, files, readerOptions, manifest, opened, tryToFix ? [] : unlisted, skipped);
  }

  info(): Info {
    this.assertOpen();
    return this.infoValue;
  }

  /** The segments' readers, manifest order, then the unlisted ones read with `tryToFix` (for maintenance and tests). */
  get segments(): readonly BackendReader[] {
    this.openAll();
    return this.sequence.map((s) => s.reader);
  }

  /** Segments opened (and currently open) by a reader that opens them when a read reaches them; undefined otherwise. */
  get lazyState(): { opens: number; open: number } | undefined {
    return this.lazy ? { opens: this.lazy.opens, open: this.lazy.openCount } : undefined;
  }

  /** Every segment's schemas; a (name, family) pair seen in an earlier segment is kept once. */
  schemas(): SchemaData[] {
    this.assertOpen();
    const seen = new Set<string>();
    const out: SchemaData[] = [];
    const collect = (reader: BackendReader): void => {
      for (const schema of reader.schemas()) {
        const key = schemaKey(schema.name, schema.schemaType);
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(schema);
      }
    };
    if (this.lazy) {
      // One segment at a time, so a long recording is not held open.
      this.lazy.forEach(collect);
    } else for (const { reader } of this.sequence) collect(reader);
    return out;
  }

  /**
   * Frames of every segment in manifest order. A window starts in the segment format reference §7.3 picks; the bounds (and the
   * url filter) then apply to every segment read (§7.5).
   */
  frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.assertOpen();
    const segments = this.lazy ?? openSegments(this.sequence);
    const start = startSegment(this.lazy ? this.lazy.endsMs : this.endsMs, query.beginUs);
    return new SegmentChain(segments, start, query, (index) => (this.currentSegment = index));
  }

  /** The segment (0-based, recording order) of the last frame any cursor of this reader handed out; 0 before that. */
  splitIndex(): number {
    return this.currentSegment;
  }

  /** True when `verify()` finds nothing. */
  async check(): Promise<boolean> {
    return (await this.verify({})).ok;
  }

  /**
   * Every segment's own check, then the manifest against them: no segment skipped at open or missing from the
   * manifest, and its count, duration and per-url counts and sizes equal to the segments' totals.
   */
  async verify(options: CheckOptions): Promise<CheckReport> {
    this.assertOpen();
    this.openAll();
    const quick = options.quick === true;
    const problems = new ProblemList(this.path);
    for (const text of this.manifest.problems) problems.add(`manifest: ${text}`);
    for (const why of this.skipped) problems.add(`${why}: skipped`);
    for (const name of [...this.pending, ...this.opened.filter((o) => o.unlisted).map((o) => o.name)])
      problems.add(`segment ${name} of the interrupted recording is not listed in the manifest (fix adds it)`);
    let frames = 0;
    const total = this.sequence.length;
    const progress = quick ? undefined : options.onProgress; // the quick check is metadata only: nothing to follow
    for (const [index, { reader }] of this.sequence.entries()) {
      if (!reader.verify) {
        const ok = reader.check ? await reader.check() : false;
        if (!ok) problems.add('check failed', { file: reader.path });
        frames += reader.info().messageCount;
        progress?.({ done: index + 1, total, unit: 'segments' });
        continue;
      }
      const inSegment = progress && progressWithin(progress, index, total);
      const report = await reader.verify(quick || !inSegment ? { quick } : { quick, onProgress: inSegment });
      progress?.({ done: index + 1, total, unit: 'segments' });
      frames += report.frames;
      for (const p of report.problems) problems.add(p.message, p);
      problems.more += report.moreProblems;
    }
    if (this.manifest.problems.length === 0) {
      compareManifestTotals(problems, this.manifest, this.opened, this.sequence, this.format);
      compareSegmentFacts(problems, this.path, this.manifest, this.opened, this.format.flavor);
    }
    return problems.report(this.path, quick, frames);
  }

  async reindex(options: ReindexOptions = {}): Promise<boolean> {
    this.assertOpen();
    this.openAll();
    let ok = true;
    const total = this.sequence.length;
    const progress = options.onProgress;
    for (const [index, { reader }] of this.sequence.entries()) {
      const inSegment = progress && progressWithin(progress, index, total);
      ok = (reader.reindex ? await reader.reindex(inSegment ? { onProgress: inSegment } : {}) : false) && ok;
      progress?.({ done: index + 1, total, unit: 'segments' });
    }
    return ok;
  }

  /**
   * Repairs every segment; for an interrupted recording then also opens and repairs the segments it left out of the
   * manifest, and rewrites the manifest (atomically) with them listed, their messages in the totals and
   * `complete: true`. The manifest is left alone when a segment could not be repaired.
   */
  async fix(rebuild: boolean): Promise<boolean> {
    this.assertOpen();
    this.openAll();
    const repairsManifest = !this.manifest.complete;
    if (repairsManifest && this.options.readOnly !== false) {
      throw new BagError(
        'NOT_SUPPORTED',
        'fix rewrites the manifest of an interrupted recording: open the reader with readOnly: false',
        { file: this.path },
      );
    }
    let ok = true;
    // A segment whose header lost or garbled the start takes the manifest's (every segment has that start).
    const start = this.manifest.startTimestamp > 0 ? { recordingStart: this.manifest.startTimestamp } : {};
    for (const { reader } of this.opened) ok = (reader.fix ? await reader.fix(rebuild, start) : false) && ok;
    if (this.pending.length > 0) {
      const more = await openUnlisted(
        this.pending,
        splitPath(this.path).dir,
        this.format,
        { ...this.options, tryToFix: true },
        this.manifest,
        this.opened,
      );
      this.pending = [];
      for (const segment of more) {
        this.opened.push(segment);
        ok = (segment.reader.fix ? await segment.reader.fix(rebuild, start) : false) && ok;
      }
    }
    if (repairsManifest && ok) this.listRecovered();
    this.refresh();
    return ok;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    let first: unknown;
    try {
      this.lazy?.close();
    } catch (error) {
      first = error;
    }
    for (const { reader } of this.opened) {
      try {
        reader.close();
      } catch (error) {
        first ??= error;
      }
    }
    if (first !== undefined) throw BagError.wrap(first, 'IO_ERROR', 'cannot close a segment', { file: this.path });
  }

  /**
   * Opens every segment a lazy reader has not opened (maintenance verbs and `segments` need them all): from then on
   * the reader holds them all, as one without segment facts does. The facts are not held against them here: `verify`
   * reports where they disagree.
   */
  private openAll(): void {
    const lazy = this.lazy;
    if (!lazy) return;
    const opened = openEverySync(lazy.names, splitPath(this.path).dir, this.format.openSegmentSync!, this.options);
    this.lazy = undefined;
    lazy.close();
    this.opened = opened;
    this.refresh();
  }

  /** Rewrites the manifest with the unlisted segments listed and counted, and `complete: true`. */
  private listRecovered(): void {
    const recovered = this.sequenceOf(this.opened)
      .map((s, i) => ({ s, o: this.opened[i]! }))
      .filter(({ o }) => o.unlisted)
      .map(({ s, o }) => ({ name: o.name, info: s.reader.info(), offsetUs: s.offsetUs }));
    let text: string;
    try {
      text = this.files.readText(this.path);
      const totals = addRecoveredTotals(this.manifest, recovered, this.format.flavor);
      text = repairedManifestText(
        text,
        this.path,
        totals,
        recovered.map((r) => r.name),
        this.format.flavor,
        recordingFacts(this.manifest, totals.urls, this.opened, this.format.flavor),
      );
      this.files.writeText(this.path, text);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot rewrite the manifest', { file: this.path });
    }
    this.manifest = parseManifest(text, this.path, this.format.flavor);
    for (const o of this.opened) o.unlisted = false;
  }

  /** Recomputes the time bases, segment ends and info (after open and after a repair changed segments). */
  private refresh(): void {
    if (this.lazy) {
      this.infoValue = buildInfoFromFacts(this.path, this.format, this.manifest, this.lazy.facts, this.files);
      return;
    }
    this.sequence = this.sequenceOf(this.opened);
    this.endsMs = this.sequence.map((s) => s.reader.info().totalDuration + Math.trunc(s.offsetUs / 1000));
    this.infoValue = buildInfo(
      this.path,
      this.format,
      this.manifest,
      this.opened,
      this.sequence,
      this.files,
      this.skipped,
    );
  }

  private sequenceOf(opened: readonly OpenedSegment[]): SequencedSegment[] {
    const first = opened[0]?.reader.info();
    const firstStart = recordingStart(
      first?.startTimestamp,
      this.manifest.startTimestamp,
      first?.hasCompleted !== false,
    );
    return opened.map((o) => ({
      reader: o.reader,
      offsetUs: this.format.rebaseOnFirstSegment ? (o.reader.info().startTimestamp - firstStart) * 1000 : 0,
    }));
  }

  private assertOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }
}
