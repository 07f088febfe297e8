import type { CursorQuery, TimeBase } from '../backend/backend.js';
import { BagError } from '../errors.js';

/** What a cursor or frame iterator reads (VLink `BagReader::Config` fields a cursor uses, format reference §7.5). */
export interface CursorConfig {
  /** Urls to keep; empty or undefined = all. */
  filterUrls?: readonly string[];
  /** Window start in ms since recording start (inclusive). */
  beginTime?: number;
  /** Window end in ms since recording start (inclusive); 0 or undefined = to the end. */
  endTime?: number;
  /** Which time `beginTime`/`endTime` apply to: `log` (default) or `publish` (see `Frame.publishTime`). */
  timeBase?: TimeBase;
}

/** Checks a time base given by a caller (config objects come from JSON and the command line too). */
export function checkTimeBase(timeBase: unknown): TimeBase {
  if (timeBase === undefined || timeBase === 'log') return 'log';
  if (timeBase === 'publish') return 'publish';
  throw new BagError('INVALID_ARGUMENT', `timeBase must be 'log' or 'publish', got ${JSON.stringify(timeBase)}`);
}

/**
 * Checks a url filter given by a caller: a string would be read as its characters, anything else not iterable
 * ignored (every url read).
 */
export function checkFilterUrls(filterUrls: unknown): void {
  if (filterUrls !== undefined && (!Array.isArray(filterUrls) || filterUrls.some((url) => typeof url !== 'string')))
    throw new BagError('INVALID_ARGUMENT', 'filterUrls must be an array of url strings');
}

export function toCursorQuery(config: CursorConfig = {}): CursorQuery {
  if (typeof config !== 'object' || config === null)
    throw new BagError(
      'INVALID_ARGUMENT',
      `a read's options must be an object, not ${config === null ? 'null' : typeof config}`,
    );
  const { filterUrls, beginTime = 0, endTime = 0 } = config;
  if (!Number.isFinite(beginTime) || !Number.isFinite(endTime)) {
    throw new BagError('INVALID_ARGUMENT', 'beginTime and endTime must be finite numbers of ms');
  }
  checkFilterUrls(filterUrls);
  const query: CursorQuery = {};
  if (filterUrls && filterUrls.length > 0) query.urls = filterUrls;
  if (beginTime > 0) query.beginUs = Math.round(beginTime * 1000);
  if (endTime > 0) query.endUs = Math.round(endTime * 1000);
  if (checkTimeBase(config.timeBase) === 'publish') query.timeBase = 'publish';
  return query;
}
