import { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { unrefTimer } from '../util/schedule.js';
import { autoDumpPath, nodeDumpFiles, rotateDumps, type DumpFiles } from './dump-files.js';
import { writeDump } from './dump-writer.js';
import type { RingEntry } from './time-ring.js';
import { MAX_WINDOW_MS, resolveTriggerConfig, type TriggerConfig, type TriggerParams } from './trigger-config.js';
import type { DumpResult, TriggerEnvironment, TriggerHooks, TriggerStats, TriggerTimers } from './trigger-types.js';
import { selectUrls, triggerWindow } from './url-rules.js';
import { UrlStore } from './url-store.js';
import { refusalOf } from '../writer/frame-admission.js';
import { SchemaRegistry, type SchemaCallback } from '../writer/schema-registry.js';
import { checkCallback, checkHooks } from '../util/callback-check.js';

const realTimers: TriggerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

interface PendingDump {
  /** Abandons the post-window wait (quit). */
  cancel?: () => void;
  done: Promise<unknown>;
}

/**
 * A dashcam/EDR recorder (VLink `TriggerRecorder`, format reference §9): keeps a time ring per url and, on `trigger()`, writes
 * the pre + post window around the trigger instant to a new bag.
 *
 * There is no bus here: the caller feeds frames with `ingest(frame)`. A frame's `timestamp` is its capture time in
 * µs on the recorder clock (`environment.clock`, default µs since the recorder was created); a negative one is
 * stamped with that clock on arrival. One dump at a time; `trigger()` resolves with the dump's result after the post
 * window (+ `retentionGuardMs`) has passed and the file is written, and rejects with a `BagError` otherwise:
 * `CLOSED` (not running), `BUSY` (a dump is in progress), `INVALID_ARGUMENT` (window too large), `ABORTED`
 * (`quit()` during the post-window wait), or the writer's error.
 */
export class TriggerRecorder {
  readonly config: TriggerConfig;
  private readonly store: UrlStore;
  private readonly clock: () => number;
  private readonly wallClock: () => number;
  private readonly timers: TriggerTimers;
  private readonly files: DumpFiles;
  private hooks: TriggerHooks;
  private readonly wallAnchorUs: number;
  private running = false;
  private pending: PendingDump | undefined;
  private writing = false;
  private sweep: unknown;
  private readonly dumps = { finished: 0, failed: 0, rejected: 0 };
  private readonly schemas = new SchemaRegistry();

  constructor(config: Partial<TriggerConfig> = {}, environment: TriggerEnvironment = {}) {
    this.config = resolveTriggerConfig(config);
    const origin = performance.now();
    this.clock = environment.clock ?? (() => Math.floor((performance.now() - origin) * 1000));
    this.wallClock = environment.wallClock ?? Date.now;
    this.timers = environment.timers ?? realTimers;
    this.files = environment.files ?? nodeDumpFiles;
    this.hooks = environment.hooks ?? {};
    this.wallAnchorUs = this.wallClock() * 1000 - this.clock();
    this.store = new UrlStore(this.config, (message) => this.hooks.onWarning?.(message));
  }

  /** Replaces the hooks. */
  registerHooks(hooks: TriggerHooks): void {
    checkHooks('hooks', hooks);
    this.hooks = hooks;
  }

  /** Starts accepting frames and triggers; idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.scheduleSweep();
    this.hooks.onStart?.();
  }

  /**
   * Offers one frame; true when it was kept (false: not running, disabled, too big, busy, or over a cap; counted).
   * The payload is copied. A frame `BagWriter.push` would refuse as malformed (no url, no `Uint8Array` data, a field
   * of the wrong type) is an `INVALID_ARGUMENT`; a time past 2^53 µs a `LIMIT_REACHED`.
   */
  ingest(frame: Frame): boolean {
    if (!this.running) {
      this.store.drops.notRunning++;
      return false;
    }
    // The writer's own checks, here rather than at the dump, where a frame of the wrong type would be refused long
    // after it was offered.
    const refusal = refusalOf(frame, '', false);
    if (refusal) throw refusal.error;
    const now = this.clock();
    const captureUs = frame.timestamp >= 0 ? frame.timestamp : now;
    return this.store.add(frame, captureUs, now, this.config.busySkipData && this.writing);
  }

  /**
   * Keeps a schema (protobuf descriptor set, flatbuffers bfbs, …) for the dumps: each dump embeds those of the urls it
   * holds (as `BagWriter.pushSchema`). False, with a warning hook, on a conflict with one kept for the same name.
   */
  pushSchema(schema: SchemaData): boolean {
    try {
      this.schemas.add(schema);
      return true;
    } catch (error) {
      this.hooks.onWarning?.(`pushSchema failed: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  /** Answers schemas the dumps need and `pushSchema` did not give (as `BagWriter.registerSchemaCallback`). */
  registerSchemaCallback(callback: SchemaCallback | undefined): void {
    checkCallback('the schema callback', callback);
    this.schemas.setCallback(callback);
  }

  /** Requests a dump of the window around now (format reference §9.2); see the class notes for how it settles. */
  trigger(params: TriggerParams = {}): Promise<DumpResult> {
    const refusal = this.refusal(params);
    if (refusal) {
      this.dumps.rejected++;
      return Promise.reject(refusal);
    }
    const triggerUs = this.clock();
    const wallMs = this.wallClock();
    const windows = new Map<string, { preMs: number; postMs: number }>();
    for (const url of selectUrls(this.store.urls(), (u) => this.store.rule(u), params)) {
      windows.set(url, triggerWindow(this.store.rule(url), params));
    }
    const pending: PendingDump = { done: Promise.resolve() };
    this.pending = pending;
    const run = this.runDump(params, triggerUs, wallMs, windows, pending);
    pending.done = run.catch(() => undefined);
    return run;
  }

  /**
   * Stops: abandons a dump still waiting for its post window (it fails with `ABORTED`), lets one being written
   * finish, and drops the rings. `start()` may be called again.
   */
  async quit(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.sweep !== undefined) this.timers.clearTimeout(this.sweep);
    this.sweep = undefined;
    const pending = this.pending;
    pending?.cancel?.();
    await pending?.done;
    this.store.clear();
    this.hooks.onStop?.();
  }

  async close(): Promise<void> {
    await this.quit();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.quit();
  }

  stats(): TriggerStats {
    return {
      running: this.running,
      dumping: this.pending !== undefined,
      writing: this.writing,
      urls: [...this.store.urls()].length,
      frames: this.store.frames,
      bytes: this.store.bytes,
      dropped: { ...this.store.drops },
      covered: this.store.covered,
      dumps: { ...this.dumps },
    };
  }

  // ---------------------------------------------------------------------------------------------------------------

  private refusal(params: TriggerParams): BagError | undefined {
    if (!this.running) return new BagError('CLOSED', 'trigger recorder is not running');
    if (this.pending) return new BagError('BUSY', 'a dump is already in progress (one at a time)');
    for (const value of [params.preMs, params.postMs]) {
      if (value !== undefined && !(value <= MAX_WINDOW_MS)) {
        return new BagError('INVALID_ARGUMENT', `trigger window ${value} ms exceeds ${MAX_WINDOW_MS} ms`);
      }
    }
    return undefined;
  }

  private async runDump(
    params: TriggerParams,
    triggerUs: number,
    wallMs: number,
    windows: Map<string, { preMs: number; postMs: number }>,
    pending: PendingDump,
  ): Promise<DumpResult> {
    const reason = params.reason ?? '';
    let file = params.outFile ?? '';
    try {
      const extension = `.${this.config.fileType}`;
      const dir = this.config.dumpDir || (await this.files.defaultDir());
      if (!params.outFile) file = await autoDumpPath(this.files, dir, extension, params.nameHint, wallMs);
      const maxPost = Math.max(0, ...[...windows.values()].map((w) => w.postMs));
      if (maxPost > 0) await this.wait(maxPost + this.config.retentionGuardMs, pending);
      this.writing = true;
      const { entries, losses } = this.collect(triggerUs, windows);
      let rotated: string[] = [];
      if (!params.outFile) {
        await this.files.ensureDir(dir);
        rotated = await rotateDumps(this.files, dir, extension, this.config.maxDumpFileCount);
        for (const path of rotated) this.hooks.onFileRotated?.(path);
      }
      const plan = { file, reason, triggerUs, entries, losses, wallAnchorUs: this.wallAnchorUs };
      const written = await writeDump(plan, this.config, this.hooks, (ms) => this.wait(ms), this.schemas, this.files);
      const result: DumpResult = { file, reason, triggerUs, rotated, ...written };
      this.dumps.finished++;
      try {
        this.hooks.onDumpFinished?.(result);
      } catch (error) {
        // The dump is written and whole; the rejection is the hook's doing, and says so (not an I/O error).
        throw BagError.wrap(error, 'ABORTED', 'the onDumpFinished hook threw', { file });
      }
      return result;
    } catch (caught) {
      const error = BagError.wrap(caught, 'IO_ERROR', 'dump failed', { file });
      this.dumps.failed++;
      try {
        this.hooks.onDumpFailed?.(error, { file, reason });
      } catch {
        // The dump already failed; a throwing failure hook must not replace that error.
      }
      throw error;
    } finally {
      this.writing = false;
      if (this.pending === pending) this.pending = undefined;
    }
  }

  /** The frozen urls' entries inside their windows, stable-sorted by capture time, and their loss ratios. */
  private collect(triggerUs: number, windows: Map<string, { preMs: number; postMs: number }>) {
    const entries: RingEntry[] = [];
    const losses = new Map<string, number>();
    for (const [url, { preMs, postMs }] of windows) {
      const found = this.store.ring(url)?.window(triggerUs - preMs * 1000, triggerUs + postMs * 1000) ?? [];
      const loss = this.store.lossSinceLastDump(url);
      if (found.length === 0) continue;
      losses.set(url, loss);
      entries.push(...found);
    }
    entries.sort((a, b) => a.captureUs - b.captureUs);
    return { entries, losses };
  }

  /** A timer wait; with `pending`, `quit()` abandons it with `ABORTED`. */
  private wait(ms: number, pending?: PendingDump): Promise<void> {
    return new Promise((resolve, reject) => {
      const handle = this.timers.setTimeout(() => {
        if (pending) pending.cancel = undefined;
        resolve();
      }, ms);
      if (pending) {
        pending.cancel = () => {
          this.timers.clearTimeout(handle);
          reject(new BagError('ABORTED', 'the recorder quit before the post window ended; dump abandoned'));
        };
      }
    });
  }

  private scheduleSweep(): void {
    this.sweep = this.timers.setTimeout(() => {
      if (!this.running) return;
      this.store.expireAll(this.clock());
      this.scheduleSweep();
    }, this.config.sweepIntervalMs || 1000);
    // The sweep is housekeeping: it must not keep a process alive on its own.
    unrefTimer(this.sweep);
  }
}
