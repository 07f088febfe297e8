import { BagError, type TimeBase } from '@vlink/bag-core';

/** How a url's samples are matched to a base time `t` (README "Matching"). */
export type MatchPolicy = 'nearest' | 'previous' | 'linear';
/** What a row gets for a url that has no sample within the tolerance. */
export type MissingPolicy = 'drop' | 'ffill' | 'null';
export type AlignFormat = 'parquet' | 'csv' | 'ndjson';

export const MATCH_POLICIES: readonly MatchPolicy[] = ['nearest', 'previous', 'linear'];
export const MISSING_POLICIES: readonly MissingPolicy[] = ['drop', 'ffill', 'null'];
export const ALIGN_FORMATS: readonly AlignFormat[] = ['parquet', 'csv', 'ndjson'];

/** The base timeline: every publication of one url, or a fixed rate. */
export type AlignBase = { url: string } | { rateHz: number };

export interface AlignOptions {
  /** One row per message of this url, or per tick of a fixed rate. */
  base: AlignBase;
  /** `log` (default): the frames' log times (`timestamp`); `publish`: their publish times (`publishTime`). */
  timeBase?: TimeBase;
  /**
   * The urls to align onto the base and how each is matched. Empty or absent: every url of the bag with a data
   * action (Pub/Sub/Set/Get) except the base url, each with `defaultMatch`.
   */
  match?: Readonly<Record<string, MatchPolicy>>;
  /** The policy of urls taken by default (no `match`); `nearest` unless given. */
  defaultMatch?: MatchPolicy;
  /** Largest distance, in µs, between a base time and the sample used for it; default: no limit. */
  toleranceUs?: number;
  /** `null` (default): the url's columns are null; `ffill`: the url's last written values; `drop`: no row. */
  missing?: MissingPolicy;
  /** Fixed-rate base only: first tick, µs in the time base (default: the earliest sample of the aligned urls). */
  startUs?: number;
  /** Fixed-rate base only: last tick at or before this, µs (default: the latest sample of the aligned urls). */
  endUs?: number;
  /**
   * Publish time base only: how far, in µs of publish time, a url's sample may arrive behind the newest sample of
   * that url and still be put in order (default 1 s). A sample later than that is left out and counted
   * (`urls[].late`). Rows wait this long (in publish time) before they are final, so memory holds this much data.
   */
  reorderWindowUs?: number;
  /** What the description calls the bag (default: the reader's path; a server gives its bag id, not its path). */
  bagName?: string;
  /** Parquet only: rows per row group, flushed as it fills (default 10,000). */
  rowGroupSize?: number;
  signal?: AbortSignal;
}

/** Options checked and with their defaults. */
export interface ResolvedAlignOptions {
  base: AlignBase;
  timeBase: TimeBase;
  match: Map<string, MatchPolicy>;
  defaultMatch: MatchPolicy;
  toleranceUs: number;
  missing: MissingPolicy;
  startUs: number | undefined;
  endUs: number | undefined;
  reorderWindowUs: number;
  rowGroupSize: number;
  signal: AbortSignal | undefined;
}

const bad = (message: string) => new BagError('INVALID_ARGUMENT', message);

function oneOf<T extends string>(what: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw bad(`${what} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
}

function optionalNumber(what: string, value: unknown, check: (n: number) => boolean): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !check(value)) throw bad(`${what} is not valid: ${JSON.stringify(value)}`);
  return value;
}

function checkBase(base: unknown): AlignBase {
  if (typeof base !== 'object' || base === null) throw bad('base must be { url } or { rateHz }');
  const { url, rateHz } = base as { url?: unknown; rateHz?: unknown };
  if (url !== undefined && rateHz !== undefined) throw bad('base takes a url or a rate, not both');
  if (typeof url === 'string' && url.length > 0) return { url };
  if (typeof rateHz === 'number' && Number.isFinite(rateHz) && rateHz > 0 && rateHz <= 1e6) return { rateHz };
  throw bad(`base must be a url or a rate in Hz in (0, 1e6]; got ${JSON.stringify(base)}`);
}

/** Checks options that may come from JSON, a query string or the command line; throws INVALID_ARGUMENT. */
export function resolveAlignOptions(options: AlignOptions): ResolvedAlignOptions {
  if (typeof options !== 'object' || options === null) throw bad('align options must be an object');
  const base = checkBase(options.base);
  const timeBase = oneOf<TimeBase>('timeBase', options.timeBase, ['log', 'publish'], 'log');
  const defaultMatch = oneOf('defaultMatch', options.defaultMatch, MATCH_POLICIES, 'nearest');
  const match = new Map<string, MatchPolicy>();
  for (const [url, policy] of Object.entries(options.match ?? {})) {
    if (url.length === 0) throw bad('a matched url must not be empty');
    if ('url' in base && url === base.url) throw bad(`${url} is the base url; its own columns need no matching`);
    match.set(url, oneOf(`the match policy of ${url}`, policy, MATCH_POLICIES, defaultMatch));
  }
  const toleranceUs = optionalNumber('toleranceUs', options.toleranceUs, (n) => n >= 0) ?? Infinity;
  const startUs = optionalNumber('startUs', options.startUs, Number.isFinite);
  const endUs = optionalNumber('endUs', options.endUs, Number.isFinite);
  if (!('rateHz' in base) && (startUs !== undefined || endUs !== undefined)) {
    throw bad('startUs and endUs apply to a fixed-rate base only');
  }
  if (startUs !== undefined && endUs !== undefined && endUs < startUs) throw bad('endUs is before startUs');
  const count = (n: number) => Number.isSafeInteger(n) && n >= 1;
  return {
    base,
    timeBase,
    match,
    defaultMatch,
    toleranceUs,
    missing: oneOf('missing', options.missing, MISSING_POLICIES, 'null'),
    startUs,
    endUs,
    reorderWindowUs:
      optionalNumber('reorderWindowUs', options.reorderWindowUs, (n) => n >= 0 && Number.isFinite(n)) ?? 1_000_000,
    rowGroupSize: optionalNumber('rowGroupSize', options.rowGroupSize, count) ?? 10_000,
    signal: options.signal,
  };
}
