import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { PlayChain } from './play-chain.js';
import {
  resolvePlayConfig,
  validRate,
  DEFAULT_PLAY_CONFIG,
  type PlayConfig,
  type ResolvedPlayConfig,
} from './play-config.js';
import { PlayStatus } from './play-status.js';
import { Playback, aborted } from './playback.js';
import type { PlaybackSource } from './playback-source.js';
import {
  PlayerState,
  type FinishCallback,
  type OutputCallback,
  type PlaybackErrorCallback,
  type ReadyCallback,
  type StatusCallback,
} from './player-state.js';
import { runSession } from './session-loop.js';
import { newSession, type Session } from './session.js';
import { checkCallback } from '../util/callback-check.js';

export type {
  FinishCallback,
  OutputCallback,
  PlaybackErrorCallback,
  ReadyCallback,
  StatusCallback,
} from './player-state.js';

/**
 * The playback engine behind `BagReader` (VLink's reader loop thread, format reference §7.3–7.4): the controls and the session
 * queue; `session-loop.ts` paces the passes. JavaScript has one thread, so "the loop thread" is an async loop driven
 * by timers: it never blocks the event loop, waits with `Alarm`, and yields every few ms while emitting back to back.
 * Controls may be called from anywhere, callbacks included.
 *
 * Choices where VLink needs more than JavaScript has (documented in the core README):
 * - `play()` before `asyncRun()` starts the loop (VLink requires `async_run()` first); so does `jump()`.
 * - `play()` while a session runs queues the new session behind it (VLink posts it to the loop thread); a queued
 *   session that has not started is replaced by a newer `play()` and dropped by `stop()`, `jump()` and `quit()`.
 * - A pass that selects no frame counts as "no data": status Stopped, finish(false), the session ends.
 * - `getTimestamp()`/`getRealTimestamp()` report the pass's begin until its first frame is emitted.
 */
export class Player {
  private readonly state: PlayerState;
  private running = false;
  private quitWaiters: { promise: Promise<void>; resolve: () => void } | undefined;
  private pending: Session | undefined;
  private lastConfig: ResolvedPlayConfig = { ...DEFAULT_PLAY_CONFIG };
  /** Counts `stop()` calls, so a jump can tell that one arrived while it waited. */
  private stops = 0;

  /** `onError` lets the host (the reader) record playback errors next to its own. */
  constructor(
    private readonly source: PlaybackSource,
    onError?: (error: BagError) => void,
  ) {
    this.state = new PlayerState(onError);
  }

  registerOutputCallback(callback: OutputCallback | undefined): void {
    checkCallback('the output callback', callback);
    this.state.output = callback;
  }
  registerStatusCallback(callback: StatusCallback | undefined): void {
    checkCallback('the status callback', callback);
    this.state.onStatus = callback;
  }
  registerReadyCallback(callback: ReadyCallback | undefined): void {
    checkCallback('the ready callback', callback);
    this.state.onReady = callback;
  }
  registerFinishCallback(callback: FinishCallback | undefined): void {
    checkCallback('the finish callback', callback);
    this.state.onFinish = callback;
  }
  registerErrorCallback(callback: PlaybackErrorCallback | undefined): void {
    checkCallback('the error callback', callback);
    this.state.onError = callback;
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
    const session = newSession(resolved, {
      beginMs: this.configBegin(resolved),
      rate: resolved.rate,
      times: resolved.times,
      autoPause: resolved.autoPause,
      clearFlags: this.state.current !== undefined,
      chain,
    });
    if (!session.clearFlags) {
      this.state.paused = false;
      this.state.step = false;
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
    this.state.pause();
  }

  resume(): void {
    this.state.resume();
  }

  /** While paused, emits exactly one frame and pauses again at the next one; false when not paused. */
  pauseToNext(): boolean {
    return this.state.pauseToNext();
  }

  /**
   * Restarts playback at `beginMs` (clamped to [0, total]; past the end → `max(0, total − 100)`). The running session
   * ends without a finish callback; the new one uses the last `play()` config with `autoPause` off, `rate` and `times`
   * (default: the current ones), and stays paused if it was, unless `forceToPlay`. Resolves once the new session is
   * posted; a `stop()` or `quit()` while it waits for the old session cancels it (finish(true)).
   */
  async jump(beginMs: number, rate?: number, times?: number, forceToPlay = false): Promise<void> {
    if (!Number.isFinite(beginMs))
      throw new BagError('INVALID_ARGUMENT', `jump beginMs must be a finite number, got ${beginMs}`);
    const { totalMs } = this.source.durations();
    const begin = beginMs < 0 ? 0 : beginMs > totalMs ? Math.max(0, totalMs - 100) : beginMs;
    const { state } = this;
    const previous = state.current ?? this.pending;
    const chain = previous && !previous.chain.ended ? previous.chain : new PlayChain();
    const wasPaused = state.paused;
    const stops = this.stops;
    state.seeking = true;
    this.replacePending(undefined, chain);
    if (state.current) {
      state.current.jump = true;
      state.alarm.wake();
      await state.current.done;
      if (this.stops !== stops || !this.running) {
        // The old session ended quietly, as a jump's does; the stop or quit that came meanwhile finishes it here.
        state.seeking = false;
        state.finish(true);
        chain.settle(true);
        return;
      }
    }
    state.paused = forceToPlay ? false : wasPaused;
    state.step = false;
    const session = newSession(
      { ...this.lastConfig, autoPause: false },
      {
        beginMs: begin,
        rate: rate === undefined ? (previous?.rate ?? this.lastConfig.rate) : validRate(rate),
        times: times === undefined ? (previous?.times ?? this.lastConfig.times) : Math.trunc(times),
        autoPause: false,
        clearFlags: false,
        chain,
      },
    );
    this.replacePending(session, chain);
    this.asyncRun();
    this.kick();
  }

  /** Stops the running session (status Stopped, finish(true)) and drops a queued one; resolves when it has ended. */
  stop(): Promise<void> {
    this.stops++;
    this.replacePending(undefined);
    const session = this.state.current;
    if (!session) return Promise.resolve();
    session.stop = true;
    this.state.alarm.wake();
    return session.done;
  }

  /** Ends the loop: interrupts the running session (finish(true)); `waitForQuit()` resolves when it has ended. */
  quit(): void {
    if (!this.running) return;
    this.running = false;
    this.replacePending(undefined);
    const session = this.state.current;
    if (session) {
      session.quit = true;
      this.state.alarm.wake();
    } else {
      this.resolveQuit();
    }
  }

  waitForQuit(): Promise<void> {
    return this.quitWaiters?.promise ?? Promise.resolve();
  }

  /** Whether the loop runs (`asyncRun`, `play`, `jump` until `quit`). */
  isRunning(): boolean {
    return this.running;
  }

  /** Resolves once no session is playing or queued (each chain, jumps included, has finished). */
  async waitForIdle(): Promise<void> {
    for (;;) {
      const session = this.state.current ?? this.pending;
      if (!session) return;
      await session.chain.finished;
      // The loop clears `current` after the chain settles: let it run before looking again.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  getStatus(): PlayStatus {
    return this.state.status;
  }

  /** Playback position in ms (format reference §7.4): the last frame's time plus the time since, scaled by the rate. */
  getTimestamp(): number {
    return this.state.timestamp();
  }

  /** The last emitted frame's time in ms while playing or paused, else 0. */
  getRealTimestamp(): number {
    return this.state.status === PlayStatus.Stopped ? 0 : Math.floor(this.state.realElapsedUs / 1000);
  }

  getLastError(): BagError | undefined {
    return this.state.lastError;
  }

  /** Hands a frame to the output callback and the iterators; what a read plugin's `doCallback` reaches. */
  deliver(frame: Frame): void {
    this.state.deliver(frame);
  }

  // ---------------------------------------------------------------------------------------------------------------

  private configBegin(config: ResolvedPlayConfig): number {
    return config.skipBlank ? Math.max(config.beginTime, this.source.durations().blankMs) : config.beginTime;
  }

  /** Sets the queued session; one that is replaced before it started ends its chain unless the chain lives on. */
  private replacePending(session: Session | undefined, keepChain?: PlayChain): void {
    const old = this.pending;
    this.pending = session;
    if (old && old.chain !== keepChain && old.chain !== session?.chain && old.chain !== this.state.current?.chain) {
      old.chain.settle(true);
    }
  }

  /** Ends one playback (an iterator left its loop, or its signal aborted) without touching others that are queued. */
  private stopChain(chain: PlayChain): void {
    if (this.pending?.chain === chain) this.replacePending(undefined);
    const session = this.state.current;
    if (session?.chain === chain) {
      session.stop = true;
      this.state.alarm.wake();
    } else {
      chain.settle(true);
    }
  }

  /** Starts the queued session when the loop runs and is idle. */
  private kick(): void {
    if (this.state.current || !this.pending || !this.running) return;
    const session = this.pending;
    this.pending = undefined;
    this.state.current = session;
    session.done = (async () => {
      // Posted to the loop, as VLink does: `play()` returns before the session starts.
      await yieldToEventLoop();
      const end = await runSession(this.state, this.source, session, (config) => this.configBegin(config));
      if (end === 'finished' && session.config.autoQuit) this.quit();
    })()
      .catch((caught: unknown) => this.state.report(BagError.wrap(caught, 'INTERNAL', 'playback loop failed')))
      .finally(() => {
        this.state.current = undefined;
        if (this.running) this.kick();
        else this.resolveQuit();
      });
  }

  private resolveQuit(): void {
    const waiters = this.quitWaiters;
    this.quitWaiters = undefined;
    waiters?.resolve();
  }
}
