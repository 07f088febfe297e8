import type { TimeBase } from '../backend/backend.js';
import { BagError } from '../errors.js';
import { checkFilterUrls, checkTimeBase } from '../reader/cursor-config.js';

/**
 * Playback configuration (VLink `BagReader::Config`, format reference §7.1, camelCase). Times are ms since recording start.
 * Every field is optional; defaults are VLink's.
 */
export interface PlayConfig {
  /** Window start in ms (default 0). */
  beginTime?: number;
  /** Window end in ms, inclusive; 0 = to the end (default 0). */
  endTime?: number;
  /** Number of passes; `<= 0` loops forever (default 1). */
  times?: number;
  /** Speed multiplier; `<= 0` is treated as 1 (default 1). */
  rate?: number;
  /** Start at `max(beginTime, blankDuration)` instead of at `beginTime` (default false). */
  skipBlank?: boolean;
  /** `> 0`: a fixed wait of this many ms before every frame; `0`: no waiting; `< 0`: original timing (default −1). */
  forceDelay?: number;
  /** Start the session paused (default false). */
  autoPause?: boolean;
  /** Stop the playback loop once the session ends, unless a jump ended it (default false). */
  autoQuit?: boolean;
  /** Playback urls to keep (after a plugin's remap); empty = all. */
  filterUrls?: readonly string[];
  /**
   * `log` (default): pace by log times (`timestamp`). `publish`: pace by publish times (`publishTime`, the log time
   * where a frame has none), and apply `beginTime`/`endTime` to them. Frames still arrive in the file's (log) order:
   * one whose publish time is earlier than the one before goes out at once, never reordered (format reference §1.3).
   */
  timeBase?: TimeBase;
}

export type ResolvedPlayConfig = Required<PlayConfig>;

export const DEFAULT_PLAY_CONFIG: Readonly<ResolvedPlayConfig> = Object.freeze({
  beginTime: 0,
  endTime: 0,
  times: 1,
  rate: 1,
  skipBlank: false,
  forceDelay: -1,
  autoPause: false,
  autoQuit: false,
  filterUrls: Object.freeze([]) as readonly string[],
  timeBase: 'log',
});

/** Applies defaults and VLink's clamps (`rate <= 0` → 1); non-finite numbers are an `INVALID_ARGUMENT`. */
export function resolvePlayConfig(config: PlayConfig = {}): ResolvedPlayConfig {
  const merged: ResolvedPlayConfig = { ...DEFAULT_PLAY_CONFIG };
  for (const [key, value] of Object.entries(config)) {
    if (value !== undefined && key in DEFAULT_PLAY_CONFIG) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  for (const key of ['beginTime', 'endTime', 'times', 'rate', 'forceDelay'] as const) {
    if (typeof merged[key] !== 'number' || !Number.isFinite(merged[key])) {
      throw new BagError('INVALID_ARGUMENT', `play config ${key} must be a finite number, got ${String(merged[key])}`);
    }
  }
  merged.rate = validRate(merged.rate);
  merged.times = Math.trunc(merged.times);
  merged.beginTime = Math.max(0, merged.beginTime);
  merged.endTime = Math.max(0, merged.endTime);
  checkFilterUrls(merged.filterUrls ?? undefined);
  merged.filterUrls = [...(merged.filterUrls ?? [])];
  merged.timeBase = checkTimeBase(merged.timeBase);
  return merged;
}

/** VLink treats a rate `<= 0` (and we also treat a non-finite one) as 1. */
export function validRate(rate: number | undefined): number {
  return rate !== undefined && Number.isFinite(rate) && rate > 0 ? rate : 1;
}
