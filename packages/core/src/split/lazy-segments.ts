import type { BackendReader, CursorQuery } from '../backend/backend.js';
import { canOpenByteSourceSync, isRemotePath } from '../backend/byte-source.js';
import { BagError } from '../errors.js';
import type { ReaderOptions } from '../model/config.js';
import type { ParsedManifest } from './manifest-parse.js';
import { deriveSegment, factsDisagreement, urlKeyOf, type SegmentFacts } from './segment-facts.js';
import type { ChainSegments } from './segment-sequence.js';
import type { SplitReaderFormat } from './split-format.js';
import { segmentUnreadable } from './split-segments.js';
import { recordingStart } from './recording-start.js';

/** Segments kept open at once when none is in use: a long recording is read with a few files open, not all. */
export const MAX_OPEN_SEGMENTS = 4;

interface Slot {
  readonly name: string;
  readonly path: string;
  readonly facts: SegmentFacts;
  readonly offsetUs: number;
  readonly endMs: number;
  reader: BackendReader | undefined;
  /** Readers of this segment handed out and not yet given back (a cursor reading it): it is not closed meanwhile. */
  pins: number;
  lastUse: number;
}

/**
 * The segments of a split recording whose manifest says what each holds (`VLinkBagSegments`): none is opened until a
 * read reaches it, a read that cannot find anything in one (its time span or its urls miss the query) never opens
 * it, and at most `MAX_OPEN_SEGMENTS` stay open while unused (least recently used closed first). Opening a segment
 * holds it against the manifest's facts: a manifest that lies is a `CORRUPT_FILE` naming the segment.
 */
export class LazySegments implements ChainSegments {
  private readonly slots: Slot[];
  private readonly urlKeys: Map<number, string>;
  private uses = 0;
  /** µs from the manifest's start to the first segment's start (the frames' time base); 0 for `.vdbx`. */
  private readonly baseShiftUs: number;
  /** Segments opened so far (tests and benchmarks count them). */
  opens = 0;

  constructor(
    dir: string,
    private readonly manifest: ParsedManifest,
    facts: readonly SegmentFacts[],
    private readonly format: SplitReaderFormat & { openSegmentSync: NonNullable<SplitReaderFormat['openSegmentSync']> },
    private readonly options: ReaderOptions,
    private readonly maxOpen = MAX_OPEN_SEGMENTS,
  ) {
    const derived = facts.map((f) => deriveSegment(f, manifest.startTimestamp));
    const firstStart = recordingStart(derived[0]?.startTimestamp, manifest.startTimestamp);
    this.baseShiftUs = format.rebaseOnFirstSegment ? (firstStart - manifest.startTimestamp) * 1000 : 0;
    this.slots = facts.map((f, i) => {
      const offsetUs = format.rebaseOnFirstSegment ? (derived[i]!.startTimestamp - firstStart) * 1000 : 0;
      return {
        name: f.file,
        path: dir + f.file,
        facts: f,
        offsetUs,
        endMs: derived[i]!.totalDuration + Math.trunc(offsetUs / 1000),
        reader: undefined,
        pins: 0,
        lastUse: 0,
      };
    });
    this.urlKeys = new Map(manifest.urls.map((u) => [u.index, urlKeyOf(u, format.flavor)]));
  }

  get length(): number {
    return this.slots.length;
  }

  get names(): string[] {
    return this.slots.map((s) => s.name);
  }

  get facts(): SegmentFacts[] {
    return this.slots.map((s) => s.facts);
  }

  /** Each segment's end on the recording's time base, ms (format reference §7.3). */
  get endsMs(): number[] {
    return this.slots.map((s) => s.endMs);
  }

  /** How many segments are open now. */
  get openCount(): number {
    return this.slots.filter((s) => s.reader !== undefined).length;
  }

  offsetUs(index: number): number {
    return this.slots[index]!.offsetUs;
  }

  /**
   * True when the facts show the segment has nothing for the query: no frame, no frame of its urls, or a time span
   * outside its bounds (both inclusive, on the recording's time base).
   */
  skips(index: number, query: CursorQuery): boolean {
    const { facts } = this.slots[index]!;
    if (facts.count === 0) return true;
    if (query.urls !== undefined) {
      const wanted = new Set(query.urls);
      const any = facts.urls.some((u) => {
        const key = this.urlKeys.get(u.index);
        return key !== undefined && wanted.has(key.split('\x1f')[0]!);
      });
      if (!any) return true;
    }
    // The facts' times are µs since the manifest's start; frames are on the first segment's start.
    const begin = facts.begin - this.baseShiftUs;
    const end = facts.end - this.baseShiftUs;
    if (query.beginUs !== undefined && end < query.beginUs) return true;
    if (query.endUs !== undefined && begin > query.endUs) return true;
    return false;
  }

  /** The segment's reader, opened (and held against the facts) now if it is not open; pinned until `release`. */
  acquire(index: number): BackendReader {
    const slot = this.slots[index]!;
    slot.reader ??= this.open(slot);
    slot.pins++;
    slot.lastUse = ++this.uses;
    return slot.reader;
  }

  release(index: number): void {
    const slot = this.slots[index]!;
    if (slot.pins > 0) slot.pins--;
    this.evict();
  }

  /** Every segment's reader in turn (each released before the next is opened): reads of the whole recording. */
  forEach(visit: (reader: BackendReader, index: number) => void): void {
    for (let i = 0; i < this.slots.length; i++) {
      const reader = this.acquire(i);
      try {
        visit(reader, i);
      } finally {
        this.release(i);
      }
    }
  }

  /** Closes every open segment; the first error is thrown once all are closed. */
  close(): void {
    let first: unknown;
    for (const slot of this.slots) {
      const reader = slot.reader;
      slot.reader = undefined;
      try {
        reader?.close();
      } catch (error) {
        first ??= error;
      }
    }
    if (first !== undefined) throw first;
  }

  private open(slot: Slot): BackendReader {
    let reader: BackendReader;
    try {
      reader = this.format.openSegmentSync(slot.path, this.options);
    } catch (error) {
      throw segmentUnreadable(error, slot.name, slot.path);
    }
    this.opens++;
    const wrong = factsDisagreement(
      slot.facts,
      reader.info(),
      this.manifest.startTimestamp,
      (index) => this.urlKeys.get(index),
      this.format.flavor,
    );
    if (wrong !== undefined) {
      reader.close();
      throw new BagError('CORRUPT_FILE', `segment "${slot.name}" is not what the manifest says: ${wrong}`, {
        file: slot.path,
      });
    }
    return reader;
  }

  private evict(): void {
    const idle = this.slots.filter((s) => s.reader !== undefined && s.pins === 0).sort((a, b) => a.lastUse - b.lastUse);
    let open = this.openCount;
    for (const slot of idle) {
      if (open <= this.maxOpen) break;
      const reader = slot.reader!;
      slot.reader = undefined;
      open--;
      reader.close();
    }
  }
}

/**
 * The segments of a recording to be opened only when a read reaches them, when that can be: the manifest says what
 * every listed segment holds and nothing in it is doubtful, the format opens a segment at once (also behind a url), and
 * the reader does not try to fix (that reads what is there, not what the manifest says). Local segments pass their
 * guards now. Undefined: open them all now, as VLink does.
 */
export async function openLazily(
  path: string,
  dir: string,
  manifest: ParsedManifest,
  format: SplitReaderFormat,
  options: ReaderOptions,
): Promise<LazySegments | undefined> {
  const facts = manifest.segments;
  const openSegmentSync = format.openSegmentSync;
  if (!facts || !openSegmentSync || facts.length === 0) return undefined;
  if (manifest.problems.length > 0 || manifest.version === undefined || options.tryToFix === true) return undefined;
  if (isRemotePath(path)) {
    if (!canOpenByteSourceSync(path)) return undefined;
  } else if (format.guardSegment) {
    for (const name of manifest.files) await format.guardSegment(dir + name, options);
  }
  return new LazySegments(dir, manifest, facts, { ...format, openSegmentSync }, options);
}
