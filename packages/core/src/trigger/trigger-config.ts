import { BagError } from '../errors.js';
import type { BagPluginInterface } from '../plugins/bag-plugin.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Per-url overrides (VLink `UrlConfig`). −1 (or absent) means "use the default"; 0 for the sizes means unlimited. */
export interface UrlConfig {
  preMs: number;
  postMs: number;
  maxPacketSize: number;
  maxSize: number;
  /** Keep only the pre window (post = 0). With `onlyBack` too, the url is disabled. */
  onlyFront: boolean;
  /** Keep only the post window (pre = 0). */
  onlyBack: boolean;
}

/** What to do when a url's or the global byte cap would be exceeded (VLink `kDropNewest` / `kCoverOldest`). */
export type OverflowPolicy = 'dropNewest' | 'coverOldest';

/**
 * `TriggerRecorder` configuration (VLink `TriggerRecorder::Config`, format reference §9.3, newest defaults, camelCase; sizes in
 * bytes, times in ms). Bus-only fields (`discoveryFilter`, `destroyOnOffline`) have no meaning here: frames come
 * from `ingest()`.
 */
export interface TriggerConfig {
  /** Output directory; empty → `{VLINK_TMP_DIR or the system temp dir}/vlink-trigger`. */
  dumpDir: string;
  /** Dump format as an extension without the dot: `vdb` (default), `vcap`, or any registered one (e.g. `memjson`). */
  fileType: string;
  defaultPreMs: number;
  defaultPostMs: number;
  /** Per-packet limit (0 = unlimited). */
  defaultMaxPacketSize: number;
  /** Per-url ring byte cap (0 = unlimited). */
  defaultMaxSize: number;
  /** Global ring byte cap (0 = unlimited). */
  maxCacheSize: number;
  /** Retention margin, and the extra wait after the post window before writing. */
  retentionGuardMs: number;
  /** Keep at most this many auto-named dumps in `dumpDir` (0 = unlimited). */
  maxDumpFileCount: number;
  enableCompress: boolean;
  enableChunkCrc: boolean;
  /** Drop ingested frames while a dump is being written. */
  busySkipData: boolean;
  overflow: OverflowPolicy;
  /** Throttle: sleep `sleepTimeMs` after every `sleepInterval` bytes written (0 ms = off). */
  sleepInterval: number;
  sleepTimeMs: number;
  /** Exact urls to record (empty = all) and to ignore. */
  whitelist: readonly string[];
  blacklist: readonly string[];
  urlOverrides: Readonly<Record<string, Partial<UrlConfig>>>;
  /** A plugin bound to each dump's writer (typically a `BagProcessorPlugin` to store in data-plane time). */
  bagPlugin?: () => BagPluginInterface;
  /** How often every ring is swept of expired entries (VLink's interval is not determinable; 1 s here). */
  sweepIntervalMs: number;
}

export const DEFAULT_TRIGGER_CONFIG: Readonly<TriggerConfig> = Object.freeze({
  dumpDir: '',
  fileType: 'vdb',
  defaultPreMs: 15_000,
  defaultPostMs: 0,
  defaultMaxPacketSize: 4 * MiB,
  defaultMaxSize: 0,
  maxCacheSize: 2 * GiB,
  retentionGuardMs: 500,
  maxDumpFileCount: 10,
  enableCompress: false,
  enableChunkCrc: true,
  busySkipData: false,
  overflow: 'dropNewest' as OverflowPolicy,
  sleepInterval: 4 * MiB,
  sleepTimeMs: 0,
  whitelist: [] as readonly string[],
  blacklist: [] as readonly string[],
  urlOverrides: {},
  sweepIntervalMs: 1000,
});

/** One dump request (VLink `TriggerParams`). Windows of −1 (or absent) use the configured ones; they only shrink them. */
export interface TriggerParams {
  /** Stored as the dump's tag. */
  reason?: string;
  /** Base name for an auto-named dump (default: the local time `YYYY-MM-DD_hh-mm-ss-mmm`). */
  nameHint?: string;
  /** Exact output path; such dumps are never rotated. */
  outFile?: string;
  preMs?: number;
  postMs?: number;
  whitelist?: readonly string[];
  blacklist?: readonly string[];
  /** Comma- or space-separated substrings, matched case-insensitively: keep matching urls (drop them in `blackMode`). */
  filterStr?: string;
  blackMode?: boolean;
}

/** VLink's `kMaxWindowMs = INT64_MAX / 4000`. */
export const MAX_WINDOW_MS = Number(9223372036854775807n / 4000n);

export function resolveTriggerConfig(config: Partial<TriggerConfig> = {}): TriggerConfig {
  const resolved: TriggerConfig = { ...DEFAULT_TRIGGER_CONFIG };
  for (const [key, value] of Object.entries(config)) {
    if (value !== undefined) (resolved as unknown as Record<string, unknown>)[key] = value;
  }
  for (const key of [
    'defaultPreMs',
    'defaultPostMs',
    'defaultMaxPacketSize',
    'defaultMaxSize',
    'maxCacheSize',
    'retentionGuardMs',
    'maxDumpFileCount',
    'sleepInterval',
    'sleepTimeMs',
    'sweepIntervalMs',
  ] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) {
      throw new BagError(
        'INVALID_ARGUMENT',
        `trigger ${key} must be a finite number >= 0, got ${String(resolved[key])}`,
      );
    }
  }
  if (resolved.overflow !== 'dropNewest' && resolved.overflow !== 'coverOldest') {
    throw new BagError(
      'INVALID_ARGUMENT',
      `trigger overflow must be 'dropNewest' or 'coverOldest', got ${String(resolved.overflow)}`,
    );
  }
  resolved.fileType = resolved.fileType.replace(/^\./, '').toLowerCase();
  return resolved;
}
