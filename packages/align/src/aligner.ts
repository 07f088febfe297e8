import { BagError, type BagReader, countsForFrequency, type Frame } from '@vlink/bag-core';
import { yieldToEventLoop } from '@vlink/bag-core/internal';
import type { AlignColumn, FlattenIssues } from './columns.js';
import { isReady, type Match, matchAt } from './matcher.js';
import type { ResolvedAlignOptions } from './options.js';
import type { AlignPlan } from './setup.js';
import { type Sample, type UrlCounts, UrlSeries } from './series.js';

/** Row totals of one alignment. */
export interface RowCounts {
  /** Rows written. */
  rows: number;
  /** Base times whose row was not written: a url missing under `drop`, or a base message that did not decode. */
  droppedRows: number;
  /** Frames read from the bag (all aligned urls and the base url). */
  framesRead: number;
}

/** The column list of a plan: `time`, the base url's fields, then per aligned url `<url>#time` and its fields. */
export function columnsOf(plan: AlignPlan): AlignColumn[] {
  const columns: AlignColumn[] = [
    { name: 'time', type: 'timestamp', role: 'time', ...(plan.baseUrl ? { url: plan.baseUrl } : {}) },
  ];
  if (plan.baseUrl) columns.push(...(plan.layouts.get(plan.baseUrl)?.fields ?? []));
  for (const { url } of plan.aligned) {
    columns.push({ name: `${url}#time`, type: 'timestamp', role: 'sampleTime', url });
    columns.push(...(plan.layouts.get(url)?.fields ?? []));
  }
  return columns;
}

/**
 * Base times one `drain` looks at, at most. A batch of rows then stays small (`alignChunks` holds one), and a long
 * run of them gives the event loop its turn between batches (`drained`): a 1 MHz rate over a bag of 9 s once made a
 * single batch of 9 million rows at the end of the bag, 430 MB of CSV and then an INTERNAL "Invalid string length",
 * with the server's thread held for 13-18 s (found by http-api's api-fuzz.test.ts).
 */
const BATCH_TIMES = 4096;

/**
 * The alignment engine: one pass over the bag in log-time order. Every url's messages go to its series (put in
 * time-base order); a row is made for a base time as soon as every aligned url's match there is final
 * (`isReady`), so memory holds only the messages between the oldest unfinished base time and the newest frame read.
 * Yields rows in batches (one array per column order of `columnsOf`; times as µs on the time base).
 */
export class Aligner {
  readonly counts: RowCounts = { rows: 0, droppedRows: 0, framesRead: 0 };
  readonly perUrl = new Map<string, UrlCounts>();
  private readonly series = new Map<string, UrlSeries>();
  private readonly aligned: UrlSeries[];
  private readonly base: UrlSeries | undefined;
  private readonly issues = new Map<string, FlattenIssues>();
  /** Log time base: every frame with a log time below this has been read. */
  private logHorizon = -Infinity;
  private nextTick: number | undefined;
  private readonly periodUs: number;

  constructor(
    private readonly plan: AlignPlan,
    private readonly options: ResolvedAlignOptions,
  ) {
    const window = options.timeBase === 'publish' ? options.reorderWindowUs : 0;
    if (plan.baseUrl !== undefined) {
      this.base = new UrlSeries(plan.baseUrl, 'previous', window);
      this.series.set(plan.baseUrl, this.base);
    }
    this.aligned = plan.aligned.map(({ url, policy }) => {
      const series = new UrlSeries(url, policy, window);
      this.series.set(url, series);
      return series;
    });
    for (const [url, series] of this.series) {
      this.perUrl.set(url, series.counts);
      this.issues.set(url, { unknownFields: new Map(), typeMismatches: 0 });
    }
    this.periodUs = 'rateHz' in options.base ? 1e6 / options.base.rateHz : 0;
  }

  /** The rows, in batches, as the bag is read. */
  async *rows(reader: BagReader): AsyncGenerator<unknown[][], void, undefined> {
    const { signal, timeBase } = this.options;
    const filterUrls = [...this.series.keys()];
    for await (const frame of reader.frames({ filterUrls, ...(signal ? { signal } : {}) })) {
      this.counts.framesRead++;
      const series = this.series.get(frame.url);
      if (series === undefined) continue;
      if (!countsForFrequency(frame.actionType)) {
        series.counts.skippedActions++;
        continue;
      }
      const time = timeBase === 'publish' ? (frame.publishTime ?? frame.timestamp) : frame.timestamp;
      // the reader's data is a view valid until the next read: the sample keeps a copy
      const copy: Frame = {
        timestamp: frame.timestamp,
        url: frame.url,
        data: frame.data.slice(),
        serType: frame.serType,
        schemaType: frame.schemaType,
        actionType: frame.actionType,
      };
      series.push({ time, frame: copy });
      this.logHorizon = frame.timestamp;
      yield* this.drained();
    }
    for (const series of this.series.values()) series.end();
    yield* this.drained();
    this.finishIssues();
  }

  /** Every row ready now, a batch at a time; between the batches of a long run the event loop gets its turn. */
  private async *drained(): AsyncGenerator<unknown[][], void, undefined> {
    for (;;) {
      const { rows, cut } = this.drain();
      if (rows.length > 0) yield rows;
      if (!cut) return;
      const { signal } = this.options;
      if (signal?.aborted) throw new BagError('ABORTED', 'alignment was aborted', { cause: signal.reason });
      await yieldToEventLoop();
    }
  }

  private horizon(series: UrlSeries): number {
    if (series.ended) return Infinity;
    return this.options.timeBase === 'log' ? this.logHorizon : series.cutoff;
  }

  private ready(t: number): boolean {
    for (const series of this.aligned) {
      if (!isReady(series, t, this.horizon(series), this.options.toleranceUs)) return false;
    }
    return true;
  }

  /** The rows of at most `BATCH_TIMES` base times that are ready; `cut`: it stopped there, more may be ready. */
  private drain(): { rows: unknown[][]; cut: boolean } {
    const out: unknown[][] = [];
    let examined = 0;
    if (this.base) {
      const base = this.base;
      while (examined < BATCH_TIMES && base.head < base.queue.length) {
        const sample = base.queue[base.head]!;
        if (!this.ready(sample.time)) break;
        base.head++;
        examined++;
        const values = this.valuesOf(base, sample);
        if (values === null) this.counts.droppedRows++;
        else this.emit(out, sample.time, values);
      }
      if (base.head >= 64) {
        base.queue.splice(0, base.head);
        base.head = 0;
      }
      return { rows: out, cut: examined === BATCH_TIMES };
    }
    // Stopped at BATCH_TIMES, the tick after the last one taken is pending: the next drain starts at it (`firstTick`).
    for (
      let t = this.firstTick();
      examined < BATCH_TIMES && t !== undefined && t <= this.lastTick();
      t = this.advanceTick()
    ) {
      if (!this.ready(t)) break;
      examined++;
      this.emit(out, t, []);
    }
    return { rows: out, cut: examined === BATCH_TIMES };
  }

  /** Fixed rate: the first tick, once known (`startUs`, else the earliest first sample of the aligned urls). */
  private firstTick(): number | undefined {
    if (this.nextTick !== undefined) return this.nextTick;
    let start = this.options.startUs;
    if (start === undefined) {
      if (!this.aligned.every((s) => s.ended || s.firstTime !== undefined)) return undefined;
      const firsts = this.aligned.flatMap((s) => (s.firstTime === undefined ? [] : [s.firstTime]));
      if (firsts.length === 0) return undefined;
      start = Math.min(...firsts);
    }
    this.tickIndex = 0;
    this.tickStart = start;
    this.nextTick = start;
    return start;
  }

  private tickIndex = 0;
  private tickStart = 0;

  private advanceTick(): number {
    this.tickIndex++;
    // from the start and the index, not by adding the period, so ticks of a 3 Hz rate do not drift
    this.nextTick = this.tickStart + Math.round(this.tickIndex * this.periodUs);
    return this.nextTick;
  }

  /** Fixed rate: the last tick allowed (`endUs`, else the latest sample once every url ended; until then none). */
  private lastTick(): number {
    if (this.options.endUs !== undefined) return this.options.endUs;
    if (!this.aligned.every((s) => s.ended)) return Infinity;
    const lasts = this.aligned.flatMap((s) => (s.lastTime === undefined ? [] : [s.lastTime]));
    return lasts.length === 0 ? -Infinity : Math.max(...lasts);
  }

  private emit(out: unknown[][], t: number, baseValues: unknown[]): void {
    const row: unknown[] = [t, ...baseValues];
    for (const series of this.aligned) {
      const got = this.resolve(series, matchAt(series, t, this.options.toleranceUs), t);
      if (got === undefined) {
        this.counts.droppedRows++;
        return;
      }
      row.push(...got);
    }
    this.counts.rows++;
    out.push(row);
    // ffill repeats only values that reached a written row
    this.rememberWritten(row);
  }

  private rememberWritten(row: unknown[]): void {
    if (this.options.missing !== 'ffill') return;
    let at = 1 + (this.base ? (this.plan.layouts.get(this.base.url)?.fields.length ?? 0) : 0);
    for (const series of this.aligned) {
      const width = this.plan.layouts.get(series.url)?.fields.length ?? 0;
      const time = row[at];
      if (time !== null) series.lastWritten = { time: time as number, values: row.slice(at + 1, at + 1 + width) };
      at += 1 + width;
    }
  }

  /** The url's `[sampleTime, ...values]` for the row, or undefined to drop the row. */
  private resolve(series: UrlSeries, match: Match, t: number): unknown[] | undefined {
    const counts = series.counts;
    if (match.kind === 'sample') {
      const values = this.valuesOf(series, match.sample);
      if (values !== null) {
        counts.matched++;
        return [match.sample.time, ...values];
      }
    } else if (match.kind === 'linear') {
      const before = this.valuesOf(series, match.before);
      const after = this.valuesOf(series, match.after);
      if (before !== null && after !== null) {
        counts.matched++;
        counts.interpolated++;
        return [
          t,
          ...this.interpolate(series.url, before, after, t - match.before.time, match.after.time - match.before.time),
        ];
      }
    }
    counts.missing++;
    const width = this.plan.layouts.get(series.url)?.fields.length ?? 0;
    switch (this.options.missing) {
      case 'drop':
        return undefined;
      case 'ffill':
        if (series.lastWritten) {
          counts.filled++;
          return [series.lastWritten.time, ...series.lastWritten.values];
        }
        return new Array(width + 1).fill(null);
      default:
        return new Array(width + 1).fill(null);
    }
  }

  /** Numeric columns linearly between the two samples; every other column takes the earlier sample's value. */
  private interpolate(url: string, before: unknown[], after: unknown[], elapsed: number, span: number): unknown[] {
    const fields = this.plan.layouts.get(url)?.fields ?? [];
    return before.map((a, i) => {
      const b = after[i];
      if (fields[i]?.type !== 'double' || typeof a !== 'number' || typeof b !== 'number') return a;
      // (b − a)·elapsed / span, multiplied first: exact for integer data on integer times where it can be
      return a + ((b - a) * elapsed) / span;
    });
  }

  /** Decodes a sample on first use; null (and counted) when its payload does not decode. */
  private valuesOf(series: UrlSeries, sample: Sample): unknown[] | null {
    if (sample.values !== undefined) return sample.values;
    const layout = this.plan.layouts.get(series.url);
    const decoded = this.plan.decoder.decode(sample.frame as Frame);
    if (layout === undefined || decoded.kind === 'hex') {
      series.counts.decodeErrors++;
      sample.values = null;
    } else {
      sample.values = layout.read(decoded.value, this.issues.get(series.url)!);
    }
    return sample.values;
  }

  private finishIssues(): void {
    for (const [url, issues] of this.issues) {
      const counts = this.perUrl.get(url)!;
      counts.typeMismatches = issues.typeMismatches;
      counts.unknownFields = Object.fromEntries(issues.unknownFields);
    }
  }
}
