import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { Alarm } from './alarm.js';
import { PassClock } from './pass-clock.js';
import { PlayChain } from './play-chain.js';
import { resolvePlayConfig, validRate, DEFAULT_PLAY_CONFIG, type PlayConfig, type ResolvedPlayConfig } from './play-config.js';
import { PlayStatus } from './play-status.js';
import { Playback, aborted } from './playback.js';
import type { PlaybackSource } from './playback-source.js';

/** A frame callback; a returned promise is awaited before the next frame (an async callback paces the loop). */
export type OutputCallback = (frame: Frame) => void | Promise<void>;
export type StatusCallback = (status: PlayStatus) => void;
export type ReadyCallback = () => void;
export type FinishCallback = (isInterrupted: boolean) => void;
export type PlaybackErrorCallback = (error: BagError) => void;

/** How long the loop may emit back to back (late frames, `forceDelay: 0`) before yielding to the event loop. */
const SLICE_MS = 8;

const now = () => performance.now();

type PassEnd = 'end' | 'interrupted' | 'jump';

/** One session (spec §7.4): a `play()` or a jump, with its own stop/jump/quit flags. */
interface Session {
  config: ResolvedPlayConfig;
  beginMs: number;
  rate: number;
  times: number;
  autoPause: boolean;
  /** `play()` clears the pause and step flags; deferred to the session's start when another session still runs. */
  clearFlags: boolean;
  chain: PlayChain;
  stop: boolean;
  jump: boolean;
  quit: boolean;
  done: Promise<void>;
}

/**
 * The playback engine behind `BagReader` (VLink's reader loop thread, spec §7.3–7.4). JavaScript has one thread, so
 * "the loop thread" is an async loop driven by timers: it never blocks the event loop, waits with {@link Alarm}, and
 * yields every few ms while emitting back to back. Controls may be called from anywhere, callbacks included.
 *
 * Choices where VLink needs more than JavaScript has (documented in the core README):
 * - `play()` before `asyncRun()` starts the loop (VLink requires `async_run()` first); so does `jump()`.
 * - `play()` while a session runs queues the new session behind it (VLink posts it to the loop thread); a queued
 *   session that has not started is replaced by a newer `play()` and dropped by `stop()`, `jump()` and `quit()`.
 * - A pass that selects no frame counts as "no data": status Stopped, finish(false), the session ends.
 * - `getTimestamp()`/`getRealTimestamp()` report the pass's begin until its first frame is emitted.
 */
export class Player {
  private status = PlayStatus.Stopped;
  private paused = false;
  private step = false;
  private seeking = false;
  private running = false;
  private quitWaiters: { promise: Promise<void>; resolve: () => void } | undefined;
  private current: Session | undefined;
  private pending: Session | undefined;
  private lastConfig: ResolvedPlayConfig = { ...DEFAULT_PLAY_CONFIG };
  private clock: PassClock | undefined;
  private realElapsedUs = 0;
  private lastEmitWall = 0;
  private deliveries: Array<Promise<void>> = [];
  private readonly alarm = new Alarm();
  private lastError: BagError | undefined;
  /** Counts `stop()` calls, so a jump can tell that one arrived while it waited. */
  private stops = 0;

  private outputCallback: OutputCallback | undefined;
  private statusCallback: StatusCallback | undefined;
  private readyCallback: ReadyCallback | undefined;
  private finishCallback: FinishCallback | undefined;
  private errorCallback: PlaybackErrorCallback | undefined;

  /** `onError` lets the host (the reader) record playback errors next to its own. */
  constructor(
    private readonly source: PlaybackSource,
    private readonly onError?: (error: BagError) => void,
  ) {}

  registerOutputCallback(callback: OutputCallback | undefined): void {
    this.outputCallback = callback;
  }
  registerStatusCallback(callback: StatusCallback | undefined): void {
    this.statusCallback = callback;
  }
  registerReadyCallback(callback: ReadyCallback | undefined): void {
    this.readyCallback = callback;
  }
  registerFinishCallback(callback: FinishCallback | undefined): void {
    this.finishCallback = callback;
  }
  registerErrorCallback(callback: PlaybackErrorCallback | undefined): void {
    this.errorCallback = callback;
  }

  /** Starts the playback loop (VLink `async_run`); idempotent. */
  asyncRun(): void {
    if (this.running) return;
    this.running = true;
    if (!this.quitWaiters) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.quitWaiters = { promise, resolve };
    }
    this.kick();
  }

  /** Starts a session with `config` (see the class notes for `play()` while a session runs). */
  play(config: PlayConfig & { signal?: AbortSignal } = {}): Playback {
    const { signal, ...rest } = config;
    if (signal?.aborted) throw aborted(signal);
    const resolved = resolvePlayConfig(rest);
    this.lastConfig = resolved;
    const chain = new PlayChain();
    const session = this.newSession(resolved, {
      beginMs: this.configBegin(resolved),
      rate: resolved.rate,
      times: resolved.times,
      autoPause: resolved.autoPause,
      clearFlags: this.current !== undefined,
      chain,
    });
    if (!session.clearFlags) {
      this.paused = false;
      this.step = false;
    }
    this.replacePending(session);
    if (signal) {
      const onAbort = () => this.stopChain(chain);
      signal.addEventListener('abort', onAbort, { once: true });
      void chain.finished.then(() => signal.removeEventListener('abort', onAbort));
    }
    this.asyncRun();
    this.kick();
    return new Playback(chain, () => this.stopChain(chain), signal);
  }

  /** Pauses at the next frame, or inside the current wait (the remaining wait is kept for `resume()`). */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.clock?.freeze();
    this.alarm.wake();
  }

  resume(): void {
    this.step = false;
    if (!this.paused) return;
    this.paused = false;
    this.clock?.unfreeze();
    this.alarm.wake();
  }

  /** While paused, emits exactly one frame and pauses again at the next one; false when not paused. */
  pauseToNext(): boolean {
    if (!this.paused) return false;
    this.step = true;
    this.alarm.wake();
    return true;
  }

  /**
   * Restarts playback at `beginMs` (clamped to [0, total]; past the end → `max(0, total − 100)`). The running session
   * ends without a finish callback; the new one uses the last `play()` config with `autoPause` off, `rate` and `times`
   * (default: the current ones), and stays paused if it was, unless `forceToPlay`. Resolves once the new session is
   * posted.
   */
  async jump(beginMs: number, rate?: number, times?: number, forceToPlay = false): Promise<void> {
    if (!Number.isFinite(beginMs)) throw new BagError('INVALID_ARGUMENT', `jump beginMs must be a finite number, got ${beginMs}`);
    const { totalMs } = this.source.durations();
    const begin = beginMs < 0 ? 0 : beginMs > totalMs ? Math.max(0, totalMs - 100) : beginMs;
    const previous = this.current ?? this.pending;
    const chain = previous && !previous.chain.ended ? previous.chain : new PlayChain();
    const wasPaused = this.paused;
    const stops = this.stops;
    this.seeking = true;
    this.replacePending(undefined, chain);
    if (this.current) {
      this.current.jump = true;
      this.alarm.wake();
      await this.current.done;
      if (this.stops !== stops || !this.running) {
        // stop() or quit() arrived while the jump waited: the old session ended quietly, so finish it here.
        this.seeking = false;
        try {
          this.setStatus(PlayStatus.Stopped);
          this.finishCallback?.(true);
        } catch (caught) {
          this.report(BagError.wrap(caught, 'INTERNAL', 'a playback callback threw'));
        }
        chain.settle(true);
        return;
      }
    }
    this.paused = forceToPlay ? false : wasPaused;
    this.step = false;
    this.replacePending(
      this.newSession(
        { ...this.lastConfig, autoPause: false },
        {
          beginMs: begin,
          rate: rate === undefined ? previous?.rate ?? this.lastConfig.rate : validRate(rate),
          times: times === undefined ? previous?.times ?? this.lastConfig.times : Math.trunc(times),
          autoPause: false,
          clearFlags: false,
          chain,
        },
      ),
      chain,
    );
    this.asyncRun();
    this.kick();
  }

  /** Stops the running session (status Stopped, finish(true)) and drops a queued one; resolves when it has ended. */
  stop(): Promise<void> {
    this.stops++;
    this.replacePending(undefined);
    const session = this.current;
    if (!session) return Promise.resolve();
    session.stop = true;
    this.alarm.wake();
    return session.done;
  }

  /** Ends the loop: interrupts the running session (finish(true)); `waitForQuit()` resolves when it has ended. */
  quit(): void {
    if (!this.running) return;
    this.running = false;
    this.replacePending(undefined);
    if (this.current) {
      this.current.quit = true;
      this.alarm.wake();
    } else {
      this.resolveQuit();
    }
  }

  waitForQuit(): Promise<void> {
    return this.quitWaiters?.promise ?? Promise.resolve();
  }

  getStatus(): PlayStatus {
    return this.status;
  }

  /** Playback position in ms (spec §7.4): the last frame's time plus the time since, scaled by the rate. */
  getTimestamp(): number {
    if (this.status === PlayStatus.Stopped) return 0;
    if (this.seeking || !this.clock) return Math.floor(this.realElapsedUs / 1000);
    const since = this.status === PlayStatus.Paused
      ? Math.max(0, (this.clock.frozenAt ?? now()) - this.lastEmitWall)
      : now() - this.lastEmitWall;
    return Math.floor((this.realElapsedUs + since * 1000 * this.clock.rate) / 1000);
  }

  /** The last emitted frame's time in ms while playing or paused, else 0. */
  getRealTimestamp(): number {
    return this.status === PlayStatus.Stopped ? 0 : Math.floor(this.realElapsedUs / 1000);
  }

  getLastError(): BagError | undefined {
    return this.lastError;
  }

  /** Hands a frame to the output callback and the iterators; what a read plugin's `doCallback` reaches. */
  deliver(frame: Frame): void {
    const result = this.outputCallback?.(frame);
    if (result && typeof result.then === 'function') this.deliveries.push(result);
    const chain = this.current?.chain;
    if (!chain) return;
    for (const subscriber of chain.subscribers) {
      const drained = subscriber.push(frame);
      if (drained) this.deliveries.push(drained);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  private newSession(config: ResolvedPlayConfig, init: Omit<Session, 'config' | 'stop' | 'jump' | 'quit' | 'done'>): Session {
    return { config, ...init, stop: false, jump: false, quit: false, done: Promise.resolve() };
  }

  private configBegin(config: ResolvedPlayConfig): number {
    return config.skipBlank ? Math.max(config.beginTime, this.source.durations().blankMs) : config.beginTime;
  }

  /** Sets the queued session; one that is replaced before it started ends its chain unless the chain lives on. */
  private replacePending(session: Session | undefined, keepChain?: PlayChain): void {
    const old = this.pending;
    this.pending = session;
    if (old && old.chain !== keepChain && old.chain !== session?.chain && old.chain !== this.current?.chain) old.chain.settle(true);
  }

  /** Ends one playback (an iterator left its loop, or its signal aborted) without touching others that are queued. */
  private stopChain(chain: PlayChain): void {
    if (this.pending?.chain === chain) this.replacePending(undefined);
    const session = this.current;
    if (session?.chain === chain) {
      session.stop = true;
      this.alarm.wake();
    } else {
      chain.settle(true);
    }
  }

  private kick(): void {
    if (this.current || !this.pending || !this.running) return;
    const session = this.pending;
    this.pending = undefined;
    this.current = session;
    session.done = (async () => {
      // Posted to the loop, as VLink does: `play()` returns before the session starts.
      await yieldToEventLoop();
      await this.runSession(session);
    })()
      .catch((caught: unknown) => this.report(BagError.wrap(caught, 'INTERNAL', 'playback loop failed')))
      .finally(() => {
      this.current = undefined;
      if (this.running) this.kick();
      else this.resolveQuit();
    });
  }

  private resolveQuit(): void {
    const waiters = this.quitWaiters;
    this.quitWaiters = undefined;
    waiters?.resolve();
  }

  private setStatus(status: PlayStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.statusCallback?.(status);
  }

  private interrupted(s: Session): boolean {
    return s.stop || s.jump || s.quit;
  }

  private async runSession(s: Session): Promise<void> {
    let interrupted = false;
    let error: BagError | undefined;
    try {
      if (s.clearFlags) {
        this.paused = false;
        this.step = false;
      }
      this.source.readPlugin()?.onReset();
      if (s.autoPause) this.pause();
      let beginMs = s.beginMs;
      for (let pass = 0; ; ) {
        const end = await this.runPass(s, beginMs);
        if (end === 'jump') return;
        if (end === 'interrupted') {
          interrupted = true;
          break;
        }
        if (end === 'empty') break;
        beginMs = this.configBegin(s.config);
        if (!this.interrupted(s)) {
          this.source.readPlugin()?.flush();
          await this.settleDeliveries();
        }
        if (s.times > 0 && ++pass >= s.times) break;
        await yieldToEventLoop();
      }
    } catch (caught) {
      error = BagError.wrap(caught, 'IO_ERROR', 'playback failed');
      interrupted = true;
      this.report(error);
    }
    this.clock = undefined;
    this.seeking = false;
    try {
      this.setStatus(PlayStatus.Stopped);
      this.finishCallback?.(interrupted);
    } catch (caught) {
      this.report(BagError.wrap(caught, 'INTERNAL', 'a playback callback threw'));
    }
    s.chain.settle(interrupted, error);
    if (s.config.autoQuit) this.quit();
  }

  /** Errors end the session (finish(true)); they are kept for `getLastError()` and passed to the error callback. */
  private report(error: BagError): void {
    this.lastError = error;
    this.onError?.(error);
    try {
      this.errorCallback?.(error);
    } catch {
      // The error sink itself failed; the error stays available from getLastError().
    }
  }

  /** One pass (spec §7.3 and steps 1–6 of §7.4). */
  private async runPass(s: Session, beginMs: number): Promise<PassEnd | 'empty'> {
    const { config } = s;
    const iterator = this.source.open({ beginUs: Math.round(beginMs * 1000), endUs: Math.round(config.endTime * 1000), filterUrls: config.filterUrls });
    try {
      const first = iterator.next();
      this.seeking = false;
      this.readyCallback?.();
      if (first.done) {
        this.setStatus(PlayStatus.Stopped);
        return 'empty';
      }
      const clock = (this.clock = new PassClock(Math.round(beginMs * 1000), s.rate));
      if (this.paused) clock.freeze();
      this.realElapsedUs = clock.beginUs;
      this.lastEmitWall = now();
      if (s.stop || s.quit) return 'interrupted';
      if (s.jump) return 'jump';
      this.setStatus(this.paused ? PlayStatus.Paused : PlayStatus.Playing);
      let sliceStart = now();
      let count = 0;
      for (let step: IteratorResult<Frame> = first; !step.done; step = iterator.next()) {
        const frame = step.value;
        if (!this.dueNow(s, frame.timestamp, clock)) {
          const waited = await this.waitFor(s, frame.timestamp, clock);
          if (waited !== undefined) return waited;
        }
        if (this.step) {
          this.step = false;
          clock.advanceTo(clock.dueMs(frame.timestamp));
        }
        this.setStatus(PlayStatus.Playing);
        this.realElapsedUs = frame.timestamp;
        this.lastEmitWall = now();
        const plugin = this.source.readPlugin();
        if (plugin) plugin.onRead(frame);
        else this.deliver(frame);
        if (this.deliveries.length > 0) {
          await this.settleDeliveries();
          sliceStart = now();
        } else if ((++count & 31) === 0 && now() - sliceStart > SLICE_MS) {
          await yieldToEventLoop();
          sliceStart = now();
        }
        if (this.interrupted(s)) return s.jump ? 'jump' : 'interrupted';
      }
      this.setStatus(PlayStatus.Stopped);
      return 'end';
    } finally {
      try {
        iterator.return?.();
      } catch {
        // The reader may already be closed (quit during close); the cursor is gone either way.
      }
    }
  }

  /** The fast path: a frame that may go out now without awaiting anything (an await per frame costs throughput). */
  private dueNow(s: Session, timestampUs: number, clock: PassClock): boolean {
    if (this.paused || this.interrupted(s)) return false;
    const forceDelay = s.config.forceDelay;
    return forceDelay === 0 || (forceDelay < 0 && now() >= clock.deadline(timestampUs));
  }

  /**
   * Waits until a frame may be emitted: its wait (spec §7.3 step 5), then a pause (step 6). Returns how the pass
   * ends when it was interrupted, undefined when the frame is due.
   */
  private async waitFor(s: Session, timestampUs: number, clock: PassClock): Promise<PassEnd | undefined> {
    const forceDelay = s.config.forceDelay;
    let waited = forceDelay === 0;
    if (forceDelay > 0) {
      // A fixed delay is not interrupted by pause, only by stop, step, jump and quit.
      const deadline = now() + forceDelay;
      while (!this.interrupted(s) && !this.step && now() < deadline) await this.alarm.sleepUntil(deadline);
      waited = true;
    }
    for (;;) {
      if (this.interrupted(s)) return s.jump ? 'jump' : 'interrupted';
      if (this.step && this.paused) return undefined;
      if (!waited && !this.paused) {
        const deadline = clock.deadline(timestampUs);
        if (now() < deadline) {
          await this.alarm.sleepUntil(deadline);
          continue;
        }
        waited = true;
      }
      if (!this.paused) return undefined;
      this.setStatus(PlayStatus.Paused);
      await this.alarm.block();
    }
  }

  private async settleDeliveries(): Promise<void> {
    while (this.deliveries.length > 0) {
      const pending = this.deliveries;
      this.deliveries = [];
      await Promise.all(pending);
    }
  }
}
