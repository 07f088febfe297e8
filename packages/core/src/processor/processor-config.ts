import { BagError } from '../errors.js';

/** `BagProcessor` configuration (VLink `BagProcessor::Config`, format reference §8, camelCase) plus two JS-side options. */
export interface ProcessorConfig {
  /** The reorder window in ms: the oldest frame is released once the newest is this much newer (default 500). */
  minCacheTime: number;
  /** Payload bytes held before the oldest frame is released regardless of time, and `push` asks to wait (256 MiB). */
  maxCacheSize: number;
  /** A data timestamp further than this (ms) from the last one is replaced by the recording-time delta (1 h; 0 = off). */
  maxJumpTime: number;
  /**
   * Optional wall-clock drain (ms; 0 = off, the newest VLink behaviour): the oldest frame is also released once it
   * has waited this long, so a quiet producer's tail is not held until `flush()`. VLink's older processor did this
   * with `minCacheTime`.
   */
  drainAfterMs: number;
  /** Copy each frame's payload on push (default true), as VLink copies frames into its queue; readers reuse buffers. */
  copyData: boolean;
}

export const DEFAULT_PROCESSOR_CONFIG: Readonly<ProcessorConfig> = Object.freeze({
  minCacheTime: 500,
  maxCacheSize: 256 * 1024 * 1024,
  maxJumpTime: 3_600_000,
  drainAfterMs: 0,
  copyData: true,
});

export function resolveProcessorConfig(config: Partial<ProcessorConfig> = {}): ProcessorConfig {
  const resolved = { ...DEFAULT_PROCESSOR_CONFIG };
  for (const [key, value] of Object.entries(config)) {
    if (value !== undefined && key in DEFAULT_PROCESSOR_CONFIG) (resolved as Record<string, unknown>)[key] = value;
  }
  for (const key of ['minCacheTime', 'maxCacheSize', 'maxJumpTime', 'drainAfterMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) {
      throw new BagError(
        'INVALID_ARGUMENT',
        `processor ${key} must be a finite number >= 0, got ${String(resolved[key])}`,
      );
    }
  }
  return resolved;
}
