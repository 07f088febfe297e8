import { BagError } from '../errors.js';
import { storableName } from './url-identity.js';

/*
 * The writer's settings as a caller in plain JavaScript (or a config file) can pass them: each is checked once, when
 * the writer is created, so a wrong type is an `INVALID_ARGUMENT` naming the setting instead of a `TypeError` deep in a
 * backend, or a value quietly taken for its default (a string `maxTaskDepth`) or for zero (`maxMemorySize: '1G'`:
 * every frame refused).
 */

type Rule = (value: unknown) => string | undefined;

const boolean: Rule = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
// Stored as UTF-8 (a header, a split recording's manifest): a lone surrogate would come back as U+FFFD.
const string: Rule = (v) =>
  typeof v !== 'string' ? 'must be a string' : storableName(v) === v ? undefined : 'must be well-formed Unicode';
const number: Rule = (v) => (typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a finite number');
const atLeastZero: Rule = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? undefined : 'must be a number ≥ 0';
const strings: Rule = (v) => {
  if (typeof v === 'string' || typeof (v as Iterable<unknown> | null)?.[Symbol.iterator] !== 'function')
    return 'must be a list of urls';
  for (const url of v as Iterable<unknown>) if (typeof url !== 'string') return 'must hold only strings';
  return undefined;
};
// Minutes east of UTC: the widest zones are within a day.
const timezone: Rule = (v) => number(v) ?? (Math.abs(v as number) <= 24 * 60 ? undefined : 'must be within ±1440 min');
const object: Rule = (v) => (typeof v === 'object' && v !== null ? undefined : 'must be an object');
const worker: Rule = (v) =>
  typeof v === 'boolean' || v === 'node' || v === 'web' ? undefined : "must be true, false, 'node' or 'web'";

/**
 * The rule of every setting. VLink's numbers are its int64 settings, where zero or less has a meaning of its own
 * (`cacheSize <= 0`: no chunks, `splitByTime <= 0`: no time splits, a negative queue limit refuses every frame), so
 * they need only be finite numbers; `maxQueueTimeMs` is ours and a duration.
 */
const RULES: Readonly<Record<string, Rule>> = {
  tagName: string,
  walMode: boolean,
  enableLimit: boolean,
  splitNameByTime: boolean,
  overwriteSegments: boolean,
  syncMode: boolean,
  optimizeOnExit: boolean,
  enableChunkCrc: boolean,
  maxRowCount: number,
  maxBytesSize: number,
  splitBySize: number,
  splitByTime: number,
  maxSplitCount: number,
  beginTime: number,
  cacheSize: number,
  compressStartSize: number,
  compressLevel: number,
  maxTaskDepth: number,
  maxMemorySize: number,
  startTimestamp: number,
  ignoreCompressUrls: strings,
  processName: string,
  timezone,
  carry: object,
  worker,
  transferPayloads: boolean,
  maxQueueTimeMs: atLeastZero,
  summary: boolean,
};

/**
 * Throws `INVALID_ARGUMENT` for the first setting of `options` whose value its rule refuses. Undefined means the
 * default; settings this writer does not know are left to TypeScript (a VLink config may carry more).
 */
export function checkWriterSettings(options: unknown): void {
  if (typeof options !== 'object' || options === null)
    throw new BagError(
      'INVALID_ARGUMENT',
      `writer options must be an object, not ${options === null ? 'null' : typeof options}`,
    );
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const problem = RULES[name]?.(value);
    if (problem) throw new BagError('INVALID_ARGUMENT', `writer option ${name} ${problem} (got ${shown(value)})`);
  }
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
