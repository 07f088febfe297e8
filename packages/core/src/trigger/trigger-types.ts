import type { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import type { DumpFiles } from './dump-files.js';
import type { TriggerDrops } from './url-store.js';

/** What a finished dump reports (VLink `on_dump_finished`: counts, bytes, url count, start, duration). */
export interface DumpResult {
  file: string;
  reason: string;
  frames: number;
  /** Payload bytes written. */
  bytes: number;
  /** Urls with at least one frame in the dump. */
  urls: number;
  /** The dump's recording start, ms since the epoch (the earlier of the trigger and its first frame). */
  startTimestamp: number;
  /** From the dump's start to its last frame, µs. */
  durationUs: number;
  /** The trigger instant on the recorder clock, µs. */
  triggerUs: number;
  /** Files deleted by rotation before this dump was written. */
  rotated: string[];
}

/** Lifecycle and dump hooks (VLink's trigger callbacks). A throwing hook fails the dump it belongs to. */
export interface TriggerHooks {
  onStart?(): void;
  onStop?(): void;
  onDumpStarted?(info: { file: string; reason: string; triggerUs: number; frames: number }): void;
  onFrame?(frame: Frame): void;
  onDumpFinished?(result: DumpResult): void;
  onDumpFailed?(error: BagError, info: { file: string; reason: string }): void;
  onFileRotated?(file: string): void;
  /** Something worth a log line (VLink logs these). */
  onWarning?(message: string): void;
}

/** Timers as a seam, so tests (and simulations) can drive the post-window wait with a fake clock. */
export interface TriggerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Everything outside the recorder that it reads or calls; every field has a real default. */
export interface TriggerEnvironment {
  /** Capture clock, µs, monotonic (default: µs since the recorder was created). Supplied capture times use it too. */
  clock?: () => number;
  /** Wall clock, ms since the epoch (default `Date.now`); names dumps and anchors their start timestamps. */
  wallClock?: () => number;
  timers?: TriggerTimers;
  files?: DumpFiles;
  hooks?: TriggerHooks;
}

export interface TriggerStats {
  running: boolean;
  /** A dump was accepted and has not finished (waiting for its post window, or writing). */
  dumping: boolean;
  writing: boolean;
  urls: number;
  frames: number;
  bytes: number;
  dropped: TriggerDrops;
  /** Old entries evicted by `coverOldest` to make room. */
  covered: number;
  dumps: { finished: number; failed: number; rejected: number };
}
