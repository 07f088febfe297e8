import { ActionType, BagError, parseSchemaType, problemsRecord, SchemaType } from '@vlink/bag-core';
import { ProblemList } from '@vlink/bag-core/internal';
import type {
  BackendReader,
  CheckOptions,
  CheckReport,
  CursorQuery,
  Frame,
  Info,
  ReaderOptions,
  ProgressCallback,
  ReindexOptions,
  SalvageOptions,
  SchemaData,
} from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import { FileReadable } from '../io/file-readable.js';
import type { Readable } from '../io/readable.js';
import { splitTime } from '../mcap/blocks.js';
import { TWO_32 } from '../mcap/constants.js';
import { McapFileReader, type McapReaderOptions } from '../mcap/mcap-reader.js';
import { readableThroughout, recoveryProblems, unfinishedNote } from '../mcap/read-around.js';
import { checkVcapReadable, type VcapCheckReport } from '../maintenance/check.js';
import { fixVcap } from '../maintenance/fix-file.js';
import type { VcapFixReport } from '../maintenance/fix-report.js';
import { headerFallback, readSidecarFacts } from '../maintenance/sidecar-facts.js';
import { VLINK_PROFILE } from './vcap-format.js';
import { describeVcap, type ChannelTemplate, type VcapLayout } from './vcap-info.js';

/**
 * Reads one `.vcap` (or any MCAP file) through the Backend seam. Frames come in file order within the time window
 * (VLink's order; timestamp order for monotonic recordings), with `timestamp = (logTime − start_ns)/1000` µs,
 * truncated as C++ integer division does, and `publishTime` the same from `publish_time` (floored).
 */
export class VcapReader implements BackendReader {
  private closed = false;
  private byId: Array<ChannelTemplate | undefined> = [];
  private baseHi = 0;
  private baseLo = 0;
  /** What the open read around (with `tryToFix`; see read-around.ts), listed by `info()` under `vcap.problems`. */
  private problems: string[] = [];
  /** What the last `check()` found (problems listed), and what the last `fix()`/`reindex()` kept and dropped. */
  lastCheckReport: VcapCheckReport | undefined;
  lastFixReport: VcapFixReport | undefined;

  constructor(
    readonly path: string,
    public mcap: McapFileReader,
    private layout: VcapLayout,
    private readonly context?: { options: ReaderOptions; codecs: Codecs; readable: Readable },
  ) {
    this.adopt(mcap, layout);
  }

  /** Opens a file: a damaged or unfinished VLink file needs `tryToFix`; foreign MCAP files may always be scanned. */
  static open(
    path: string,
    options: ReaderOptions,
    codecs: Codecs,
    readable: Readable = new FileReadable(path),
  ): VcapReader {
    const { mcap, layout, problems } = VcapReader.load(path, options, codecs, readable);
    const reader = new VcapReader(path, mcap, layout, { options, codecs, readable });
    reader.problems = problems;
    return reader;
  }

  private static load(
    path: string,
    options: ReaderOptions,
    codecs: Codecs,
    readable: Readable,
  ): { mcap: McapFileReader; layout: VcapLayout; problems: string[] } {
    try {
      const tryToFix = options.tryToFix === true;
      const open = (more: Pick<McapReaderOptions, 'scanDespiteSummary'> = {}) =>
        McapFileReader.open(readable, {
          codecs,
          file: path,
          validateCrcs: options.verifyCrc !== false,
          allowScan: (header) => header.profile !== VLINK_PROFILE || tryToFix,
          chunksHoldEveryMessage: (header) => header.profile === VLINK_PROFILE,
          ...more,
        });
      // With tryToFix, a chunk that does not read (its CRC fails, it does not decompress) is skipped by a scan, where
      // a read by the summary would stop at it: before, `clone --try-to-fix` of a .vcap with one bad chunk copied
      // nothing, while `fix` dropped only that chunk.
      const { mcap, fellBack } = readableThroughout(open(), open, tryToFix);
      const unfinished = unfinishedNote(mcap);
      const problems = [
        ...(fellBack === undefined ? [] : [fellBack]),
        ...recoveryProblems(mcap),
        ...(unfinished === undefined ? [] : [unfinished]),
      ];
      const layout = describeVcap(mcap, path, readable.size(), options.tryToFix === true, {
        verifyCrc: options.verifyCrc !== false,
        // A damaged VLinkHeader's values, confirmed by the summary sidecar beside a local file (when it agrees). A
        // scan's statistics lack what the damage took, so the sidecar need only span the messages still read: its
        // count and first message would not match them (fuzz `.vcap` seed 99 #7632: one lost chunk, and every frame
        // came out 1 ms early, counted from the first message).
        confirmedHeader: (statistics, fromSummary) => {
          const sources = { sidecar: readSidecarFacts(path) };
          const read = { firstNs: statistics.messageStartTime, lastNs: statistics.messageEndTime };
          const fallback = fromSummary
            ? headerFallback(sources, statistics, undefined)
            : headerFallback(sources, undefined, statistics.messageCount > 0n ? read : undefined);
          return fallback.confirmed ? fallback : undefined;
        },
      });
      if (layout.headerProblem !== undefined) problems.push(layout.headerProblem);
      return { mcap, layout, problems };
    } catch (error) {
      readable.close();
      throw error;
    }
  }

  private adopt(mcap: McapFileReader, layout: VcapLayout): void {
    this.mcap = mcap;
    this.layout = layout;
    this.byId = [];
    for (const [id, t] of layout.templates) this.byId[id] = t;
    [this.baseHi, this.baseLo] = splitTime(layout.startNs);
  }

  info(): Info {
    const info = this.layout.info;
    // What a tryToFix read went around, as every reader of a damaged file lists it (`vcap.problems`).
    const metadata = problemsRecord('vcap', this.problems);
    return { ...info, urls: info.urls.map((u) => ({ ...u })), ...(metadata.length > 0 ? { metadata } : {}) };
  }

  schemas(): SchemaData[] {
    return [...this.mcap.schemas.values()].map((s) => ({
      name: s.name,
      encoding: s.encoding,
      schemaType: s.encoding.trim().toLowerCase() === 'jsonschema' ? SchemaType.Raw : parseSchemaType(s.encoding),
      data: s.data,
    }));
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
    let channelIds: number[] | undefined;
    if (query.urls) {
      const wanted = new Set(query.urls);
      channelIds = [];
      for (let id = 0; id < this.byId.length; id++)
        if (this.byId[id] && wanted.has(this.byId[id]!.url)) channelIds.push(id);
      if (channelIds.length === 0) return;
    }
    const start = this.layout.startNs;
    // Bounds are inclusive on the truncated µs timestamp: [ceil(begin), floor(end)] µs → [b*1000, e*1000 + 999] ns.
    const startTime = query.beginUs === undefined ? undefined : start + BigInt(Math.ceil(query.beginUs)) * 1000n;
    const endTime = query.endUs === undefined ? undefined : start + BigInt(Math.floor(query.endUs)) * 1000n + 999n;
    if (startTime !== undefined && endTime !== undefined && startTime > endTime) return;
    const cursor = this.mcap.cursor({
      ...(startTime === undefined ? {} : { startTime: startTime < 0n ? 0n : startTime }),
      ...(endTime === undefined ? {} : { endTime }),
      ...(channelIds ? { channelIds } : {}),
    });
    const frame: Frame = {
      timestamp: 0,
      url: '',
      data: cursor.data,
      serType: '',
      schemaType: SchemaType.Unknown,
      actionType: ActionType.Unknown,
      publishTime: 0,
    };
    const byId = this.byId;
    const baseHi = this.baseHi;
    const baseLo = this.baseLo;
    while (cursor.next()) {
      const t = byId[cursor.channelId];
      if (t === undefined) continue;
      const rel = (cursor.timeHi - baseHi) * TWO_32 + (cursor.timeLo - baseLo);
      // Any ns offset below 2^53 is an exact double; past it (our writers' up to 2^56 are too, another writer's need not
      // be) the µs come from the halves.
      frame.timestamp =
        rel < EXACT_NS && rel > -EXACT_NS
          ? (rel - (rel % 1000)) / 1000
          : truncUs(cursor.timeHi - baseHi, cursor.timeLo - baseLo);
      // MCAP publish_time (µs, floored: a sample may predate the start); equal to the log time unless a writer set it.
      const publishRel = (cursor.publishHi - baseHi) * TWO_32 + (cursor.publishLo - baseLo);
      frame.publishTime =
        publishRel === rel ? frame.timestamp : floorUs(cursor.publishHi - baseHi, cursor.publishLo - baseLo);
      frame.url = t.url;
      frame.data = cursor.data;
      frame.serType = t.serType;
      frame.schemaType = t.schemaType;
      frame.actionType = t.actionType;
      yield frame;
      if (this.closed) return;
    }
  }

  /**
   * Validates the whole file (`checkVcapReadable`: every record, chunk CRCs, the summary against the data, VLink
   * metadata); `lastCheckReport` lists what failed.
   */
  async check(): Promise<boolean> {
    return (await this.verify({})).ok;
  }

  /**
   * Full: `checkVcapReadable` (every record, every chunk decoded and its CRC checked, the data-section CRC, the
   * summary and the VLink metadata against the data). Quick: what opening the file found (an intact summary, no
   * damaged chunk, complete VLink metadata) and the `VLinkChannel_*` counts against the statistics.
   */
  async verify(options: CheckOptions): Promise<CheckReport> {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
    const problems = new ProblemList(this.path);
    if (options.quick) {
      quickCheck(this.mcap, this.layout, problems);
      return problems.report(this.path, true, this.layout.info.messageCount);
    }
    if (!this.context) {
      problems.add('this reader was not opened on a file it can check');
      return problems.report(this.path, false, 0);
    }
    const report = checkVcapReadable(this.context.readable, this.context.codecs, this.path, options.onProgress);
    this.lastCheckReport = report;
    for (const p of report.located) problems.add(p.text, p.offset === undefined ? {} : { offset: p.offset });
    problems.more += report.more;
    return problems.report(this.path, false, report.messages);
  }

  /**
   * Rebuilds the summary (and message indexes, `VLinkChannel_*`) by rewriting the file; needs `readOnly: false`.
   * `onProgress` follows the rewrite in bytes of the source, per chunk.
   */
  async reindex(options: ReindexOptions = {}): Promise<boolean> {
    return this.repair(false, options.onProgress);
  }

  /**
   * Repairs a damaged or unfinished file (missing or broken summary/footer, damaged chunks) into a complete one,
   * keeping every intact chunk; a file that already passes `check()` is left alone unless `rebuild` is set.
   * `lastFixReport` says what was kept and dropped. Needs `readOnly: false`; the reader then reads the new file.
   */
  async fix(rebuild = false, options: Pick<SalvageOptions, 'recordingStart'> = {}): Promise<boolean> {
    return this.repair(!rebuild, undefined, options.recordingStart);
  }

  private async repair(
    onlyIfBroken: boolean,
    onProgress?: ProgressCallback,
    recordingStart?: number,
  ): Promise<boolean> {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
    const context = this.context;
    if (!context || !(context.readable instanceof FileReadable)) {
      throw new BagError('NOT_SUPPORTED', 'only a reader opened on a file can repair it', { file: this.path });
    }
    if (context.options.readOnly !== false) {
      throw new BagError('NOT_SUPPORTED', 'fix and reindex rewrite the file: open the reader with readOnly: false', {
        file: this.path,
      });
    }
    this.lastFixReport = await fixVcap(this.path, {
      codecs: context.codecs,
      onlyIfBroken,
      ...(onProgress ? { onProgress } : {}),
      ...(recordingStart === undefined ? {} : { recordingStart }),
    });
    if (!this.lastFixReport.rewritten) return true;
    this.mcap.close();
    const readable = new FileReadable(this.path);
    const { mcap, layout, problems } = VcapReader.load(this.path, context.options, context.codecs, readable);
    context.readable = readable;
    this.adopt(mcap, layout);
    this.problems = problems;
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.mcap.close();
  }
}

/** The metadata-only check: what opening the file found, and the VLinkChannel_* counts against the statistics. */
function quickCheck(mcap: McapFileReader, layout: VcapLayout, problems: ProblemList): void {
  if (mcap.mode !== 'indexed')
    problems.add(`no usable summary (${mcap.summaryError?.message ?? 'incomplete summary section'})`);
  if (mcap.damagedChunks > 0) problems.add(`${mcap.damagedChunks} damaged chunks`);
  if (mcap.strayMessages > 0) problems.add(`${mcap.strayMessages} loose message records among chunks (damage) skipped`);
  if (mcap.copiedChunks > 0)
    problems.add(`${mcap.copiedChunks} chunks that repeat an earlier chunk byte for byte (damage) skipped`);
  if (mcap.stopReason) problems.add(`the data ends early: ${mcap.stopReason.message}`, { offset: mcap.stoppedAt ?? 0 });
  if (layout.headerName !== undefined)
    problems.add(`the VLinkHeader record's name is damaged (${JSON.stringify(layout.headerName)}): read as the header`);
  if (!layout.info.hasCompleted) problems.add('the file is incomplete (VLinkHeader or VLinkChannel_* records missing)');
  const counts = mcap.statistics.channelMessageCounts;
  for (const meta of layout.info.urls) {
    const channelId = meta.index + 1;
    const stored = Number(counts.get(channelId) ?? 0n);
    if (mcap.header.profile === VLINK_PROFILE && stored !== meta.count)
      problems.add(`VLinkChannel_${channelId} says ${meta.count} messages, the statistics ${stored}`, {
        url: meta.url,
      });
  }
}

const EXACT_NS = 2 ** 53;

/**
 * floor((hi * 2^32 + lo) / 1000) for the difference of two u64 times given as 32-bit halves, exact where the double
 * `hi * 2^32 + lo` is not (past 2^53 ns): 2^32 = 4294967 * 1000 + 296, so no term leaves the exact range.
 */
function floorUs(hi: number, lo: number): number {
  return hi * 4294967 + Math.floor((hi * 296 + lo) / 1000);
}

/** The same truncated toward zero (C++ integer division: VLink's log time to µs). */
function truncUs(hi: number, lo: number): number {
  return hi >= 0 ? floorUs(hi, lo) : -floorUs(-hi, -lo);
}
