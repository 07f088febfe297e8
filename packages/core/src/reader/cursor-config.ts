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

export function toCursorQuery(config: CursorConfig = {}): CursorQuery {
  const { filterUrls, beginTime = 0, endTime = 0 } = config;
  if (!Number.isFinite(beginTime) || !Number.isFinite(endTime)) {
    throw new BagError('INVALID_ARGUMENT', 'beginTime and endTime must be finite numbers of ms');
  }
  const query: CursorQuery = {};
  if (filterUrls && filterUrls.length > 0) query.urls = filterUrls;
  if (beginTime > 0) query.beginUs = Math.round(beginTime * 1000);
  if (endTime > 0) query.endUs = Math.round(endTime * 1000);
  if (checkTimeBase(config.timeBase) === 'publish') query.timeBase = 'publish';
  return query;
}
