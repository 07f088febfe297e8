import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { Alarm } from './alarm.js';
import type { PassClock } from './pass-clock.js';
import { PlayStatus } from './play-status.js';
import type { Session } from './session.js';

/** A frame callback; a returned promise is awaited before the next frame (an async callback paces the loop). */
export type OutputCallback = (frame: Frame) => void | Promise<void>;
export type StatusCallback = (status: PlayStatus) => void;
export type ReadyCallback = () => void;
export type FinishCallback = (isInterrupted: boolean) => void;
export type PlaybackErrorCallback = (error: BagError) => void;

const now = () => performance.now();

/**
 * What the controls and the session loop share: VLink's flags (pause, step, seeking), the status, the current pass's
 * clock and position, the callbacks, and the frames handed out whose consumers have not finished yet.
 */
export class PlayerState {
  status = PlayStatus.Stopped;
  paused = false;
  step = false;
  seeking = false;
  current: Session | undefined;
  clock: PassClock | undefined;
  realElapsedUs = 0;
  lastEmitWall = 0;
  lastError: BagError | undefined;
  readonly alarm = new Alarm();
  output: OutputCallback | undefined;
  onStatus: StatusCallback | undefined;
  onReady: ReadyCallback | undefined;
  onFinish: FinishCallback | undefined;
  onError: PlaybackErrorCallback | undefined;
  private deliveries: Array<Promise<void>> = [];

  constructor(private readonly hostError?: (error: BagError) => void) {}

  setStatus(status: PlayStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.onStatus?.(status);
  }

  /** Sets the pause flag and freezes the pass's play clock now, so the remaining wait survives the pause. */
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

  pauseToNext(): boolean {
    if (!this.paused) return false;
    this.step = true;
    this.alarm.wake();
    return true;
  }

  /** Records the emitted frame's time (for the position getters) right before it goes out. */
  markEmitted(timestampUs: number): void {
    this.realElapsedUs = timestampUs;
    this.lastEmitWall = now();
  }

  /** Position in ms (format reference §7.4): the last frame's time plus the time since, scaled by the rate. */
  timestamp(): number {
    if (this.status === PlayStatus.Stopped) return 0;
    if (this.seeking || !this.clock) return Math.floor(this.realElapsedUs / 1000);
    const since =
      this.status === PlayStatus.Paused
        ? Math.max(0, (this.clock.frozenAt ?? now()) - this.lastEmitWall)
        : now() - this.lastEmitWall;
    return Math.floor((this.realElapsedUs + since * 1000 * this.clock.rate) / 1000);
  }

  /** Hands a frame to the output callback and the current playback's iterators. */
  deliver(frame: Frame): void {
    const result = this.output?.(frame);
    if (result && typeof result.then === 'function') this.deliveries.push(result);
    const chain = this.current?.chain;
    if (!chain) return;
    for (const subscriber of chain.subscribers) {
      const drained = subscriber.push(frame);
      if (drained) this.deliveries.push(drained);
    }
  }

  get hasDeliveries(): boolean {
    return this.deliveries.length > 0;
  }

  /** Waits until every consumer is done with what it was handed (async callbacks, iterators). */
  async settleDeliveries(): Promise<void> {
    while (this.deliveries.length > 0) {
      const pending = this.deliveries;
      this.deliveries = [];
      await Promise.all(pending);
    }
  }

  /** Status Stopped and the finish callback; a throwing callback is reported, not rethrown into the loop. */
  finish(interrupted: boolean): void {
    try {
      this.setStatus(PlayStatus.Stopped);
      this.onFinish?.(interrupted);
    } catch (caught) {
      this.report(BagError.wrap(caught, 'INTERNAL', 'a playback callback threw'));
    }
  }

  /** Errors end the session (finish(true)); they are kept for `getLastError()` and passed to the error callback. */
  report(error: BagError): void {
    this.lastError = error;
    this.hostError?.(error);
    try {
      this.onError?.(error);
    } catch {
      // The error sink itself failed; the error stays available from getLastError().
    }
  }
}
