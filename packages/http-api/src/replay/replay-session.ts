import { BagError, PlayStatus, type BagReader, type Frame } from '@vlink/bag';
import type { Lease } from '../store/bag-store.js';
import { Answers, type ControlId } from './answers.js';
import { Waiter } from './waiter.js';

export type ReplayStatus = 'playing' | 'paused' | 'stopped';

/** What a client asks to play. Times in ms since recording start. */
export interface ReplayConfig {
  /** Speed multiplier; 0 = as fast as the client reads. Default 1. */
  rate: number;
  beginMs: number;
  /** Inclusive end; undefined = to the end. */
  endMs?: number;
  /** Playback urls to keep; undefined = all. */
  urls?: string[];
  /** Passes; ≤ 0 loops forever (VLink `times`). Default 1. */
  times: number;
  /** Start paused (VLink `auto_pause`). */
  paused: boolean;
  /**
   * `publish`: pace by publish times, and begin/end, seeks and the status time are publish times (core `timeBase`,
   * format reference §1.3); frames keep the file order. Default `log`.
   */
  timeBase?: 'log' | 'publish';
}

export interface StatusEvent {
  status: ReplayStatus;
  /** Timestamp of the last frame sent (or skipped), or the seek target (ms since recording start). */
  time: number;
  rate: number;
  /** Frames skipped so far because the client was too slow (paced replay only). */
  dropped: number;
  /** The id of the control this status answers (see `Answers`); absent on every other status. */
  id?: ControlId;
}

/** Where a replay sends things; one per client connection. */
export interface ReplayOutput {
  /** Bytes the transport has queued but not yet written to the socket. */
  buffered(): number;
  frame(frame: Frame): void;
  status(event: StatusEvent): void;
  finished(interrupted: boolean, dropped: number): void;
  error(error: BagError): void;
}

export interface ReplaySource {
  lease(): Promise<Lease>;
  /** ms from recording start to the last message (seek clamp). */
  durationMs(): Promise<number>;
}

/** Above this many queued bytes a paced replay drops frames and a rate-0 replay waits. */
export const SEND_BUFFER_HIGH = 8 * 1024 * 1024;
/**
 * Rate 0 ("as fast as the client reads") is played at an unbounded rate rather than with VLink's `forceDelay: 0`, so
 * a rate change is one `jump()` whichever way it goes.
 */
const UNBOUNDED_RATE = 1e9;
const DRAIN_POLL_MS = 2;

const STATUS: Record<PlayStatus, ReplayStatus> = {
  [PlayStatus.Stopped]: 'stopped',
  [PlayStatus.Paused]: 'paused',
  [PlayStatus.Playing]: 'playing',
};

/**
 * One client's replay on core's playback engine (`BagReader.play()` and its VLink controls: pause, resume,
 * `pauseToNext`, `jump`, stop), on a reader leased for this client alone.
 *
 * Backpressure lives in the output callback: with rate 0 it returns a promise that resolves once the transport is
 * below SEND_BUFFER_HIGH, and the player waits for it (nothing is lost; the client sets the pace); a paced replay
 * skips frames while more than SEND_BUFFER_HIGH bytes are queued and counts them in `dropped`, so a slow client stays
 * on the recording's clock instead of drifting ever further behind.
 *
 * Each control takes an optional client `id`, echoed on the one status event that shows the control in effect (see
 * `Answers`; each control says when that is). A control is answered when its replay ends (just before `finished`) at
 * the latest, since nothing changes after that.
 */
export class ReplaySession {
  private reader: Promise<BagReader> | undefined;
  private lease: Lease | undefined;
  private config: ReplayConfig | undefined;
  private rate = 1;
  private active = false;
  private closed = false;
  private positionUs = 0;
  /** Whether a frame went out (or was dropped) since the last play or seek: a rate change then resumes after it. */
  private passedAny = false;
  private dropped = 0;
  private lastDropReport = 0;
  private stepping = false;
  /** Whether the client asked for a pause (the player's own status follows asynchronously). */
  private pauseRequested = false;
  /** Bumped by controls that end or move the pass, so a frame waiting for the socket to drain gives way at once. */
  private interruptions = 0;
  private currentStatus: ReplayStatus = 'stopped';
  /** Controls run one after another: each may await the player (stop, jump). */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly waiter = new Waiter();
  private readonly answers = new Answers();

  constructor(
    private readonly source: ReplaySource,
    private readonly out: ReplayOutput,
  ) {}

  get status(): ReplayStatus {
    return this.currentStatus;
  }

  /** Answered by the new pass's first status, before its first frame. */
  play(config: ReplayConfig, id?: ControlId): Promise<void> {
    this.interrupt();
    return this.serial(async (reader) => {
      if (this.active) await reader.stop();
      this.config = { ...config };
      this.rate = config.rate;
      this.dropped = 0;
      this.positionUs = Math.round(config.beginMs * 1000);
      this.passedAny = false;
      this.active = true;
      reader.play({
        beginTime: config.beginMs,
        endTime: config.endMs ?? 0,
        times: config.times,
        rate: this.coreRate(),
        autoPause: config.paused,
        filterUrls: config.urls ?? [],
        timeBase: config.timeBase ?? 'log',
      });
      // The session starts on the next turn; pausing now too lets a `step` sent right after this `play` work.
      this.pauseRequested = config.paused;
      if (config.paused) reader.pause();
      this.owe(id, () => this.currentStatus !== 'stopped');
    });
  }

  /** Answered once paused: no frame follows the answer until a resume, step, seek or play. */
  pause(id?: ControlId): Promise<void> {
    return this.setPaused(true, id);
  }

  /** Answered once playing: a paced replay reports that with the next frame, when it is due. */
  resume(id?: ControlId): Promise<void> {
    return this.setPaused(false, id);
  }

  private setPaused(paused: boolean, id: ControlId | undefined): Promise<void> {
    return this.serial(async (reader) => {
      this.owe(id, () => this.currentStatus === (paused ? 'paused' : 'playing'));
      if (!this.active) return;
      this.pauseRequested = paused;
      if (paused) reader.pause();
      else reader.resume();
    });
  }

  /** Sends exactly one frame while paused (VLink `pause_to_next`); answered when paused again after that frame. */
  step(id?: ControlId): Promise<void> {
    return this.serial(async (reader) => {
      if (!this.active || !this.pauseRequested) throw new BagError('INVALID_ARGUMENT', 'step works only while paused');
      this.stepping = true;
      if (!reader.pauseToNext()) {
        this.stepping = false;
        throw new BagError('INVALID_ARGUMENT', 'step works only while paused');
      }
      this.owe(id, () => this.currentStatus === 'paused' && !this.stepping);
    });
  }

  /**
   * Continues from `ms` (clamped to the recording), keeping pause state and rate (VLink `jump`). Answered by the status
   * at the new position: every frame after the answer is from there.
   */
  seek(ms: number, id?: ControlId): Promise<void> {
    this.interrupt();
    return this.serial(async (reader) => {
      const duration = await this.source.durationMs();
      const target = ms < 0 ? 0 : ms > duration ? Math.max(0, duration - 100) : ms;
      if (!this.config) {
        // Seeking before any play opens a paused replay there (a player's scrubber).
        this.config = { rate: 1, beginMs: 0, times: 1, paused: true };
        this.rate = 1;
        this.active = true;
        this.positionUs = Math.round(target * 1000);
        this.pauseRequested = true;
        reader.play({ beginTime: target, rate: 1, autoPause: true });
        reader.pause();
        this.owe(id, () => this.currentStatus !== 'stopped');
        return;
      }
      this.active = true;
      this.positionUs = Math.round(target * 1000);
      this.passedAny = false;
      await reader.jump(target);
      // After a finished replay the jump starts a new pass: the answer waits for its first status.
      this.owe(id, () => this.currentStatus !== 'stopped');
      this.emitStatus(this.currentStatus, true);
    });
  }

  /** Answered, like `seek`, by the status of the pass that continues at the new rate. */
  setRate(rate: number, id?: ControlId): Promise<void> {
    this.interrupt();
    return this.serial(async (reader) => {
      this.rate = rate;
      if (this.config) this.config.rate = rate;
      if (this.active) {
        // Continue just after the last frame sent (never re-send it), or at the playback clock if that is later;
        // before any frame, from where the pass began.
        const fromUs = this.passedAny ? Math.max(this.positionUs + 1, reader.getTimestamp() * 1000) : this.positionUs;
        await reader.jump(fromUs / 1000, this.coreRate());
      }
      this.owe(id, () => this.currentStatus !== 'stopped');
      this.emitStatus(this.currentStatus, true);
    });
  }

  /** Answered once the replay has ended, just before its `finished` (or at once when none runs). */
  stop(id?: ControlId): Promise<void> {
    this.interrupt();
    return this.serial(async (reader) => {
      this.owe(id, () => false);
      if (this.active) await reader.stop();
    });
  }

  /** Ends the replay without events and gives the reader back (closed: its player holds this client's state). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiter.wake();
    void this.queue.finally(() => this.lease?.release(false));
  }

  private interrupt(): void {
    this.interruptions++;
    this.waiter.wake();
  }

  private coreRate(): number {
    return this.rate === 0 ? UNBOUNDED_RATE : this.rate;
  }

  /**
   * A control that fails before it can run (a malformed command): its error, which the caller sends, comes after the
   * answers of the controls before it, as a failing control's does (the replay fuzz of the HTTP API found errors sent
   * ahead of them).
   */
  refuse(error: BagError): Promise<void> {
    return this.inTurn(async () => {
      throw error;
    });
  }

  private serial(run: (reader: BagReader) => Promise<void>): Promise<void> {
    return this.inTurn(async () => {
      try {
        await run(await this.open());
      } catch (error) {
        this.answers.drop();
        throw error;
      }
      this.answer();
    });
  }

  /** Runs `step` after every control before it; an answer one of them still owes is paid first. */
  private inTurn(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(async () => {
      if (this.closed) return;
      // A control that has not taken effect yet is answered as the next one starts, so answers keep the controls' order.
      this.answer(true);
      await step();
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private open(): Promise<BagReader> {
    return (this.reader ??= this.source.lease().then((lease) => {
      this.lease = lease;
      const reader = lease.reader;
      reader.registerOutputCallback((frame) => this.onFrame(frame));
      reader.registerStatusCallback((status) => this.emitStatus(STATUS[status]));
      reader.registerFinishCallback((interrupted) => {
        this.active = false;
        if (this.closed) return;
        // Before `finished`, so a client that drops what comes before a seek's or play's answer keeps this end.
        this.answer();
        this.out.finished(interrupted, this.dropped);
      });
      reader.registerErrorCallback((error) => !this.closed && this.out.error(error));
      return reader;
    }));
  }

  private onFrame(frame: Frame): void | Promise<void> {
    if (this.closed) return;
    const stepped = this.stepping;
    this.stepping = false;
    this.positionUs = this.config?.timeBase === 'publish' ? (frame.publishTime ?? frame.timestamp) : frame.timestamp;
    this.passedAny = true;
    if (this.out.buffered() <= SEND_BUFFER_HIGH) return this.out.frame(frame);
    if (this.rate !== 0 && !stepped) return this.drop();
    // The player awaits this promise before reading on, so `frame.data` stays valid until it is sent.
    const interruptions = this.interruptions;
    const live = () => !this.closed && interruptions === this.interruptions;
    return (async () => {
      while (live() && this.out.buffered() > SEND_BUFFER_HIGH) await this.waiter.wait(DRAIN_POLL_MS);
      // A stop, seek or rate change while we waited: this frame belongs to the pass being left.
      if (live()) this.out.frame(frame);
    })();
  }

  private drop(): void {
    this.dropped++;
    const wall = performance.now();
    if (wall - this.lastDropReport >= 1000) {
      this.lastDropReport = wall;
      this.emitStatus(this.currentStatus, true);
    }
  }

  /** A control's answer is due once `inEffect()` holds, or once its replay has ended (nothing more will change). */
  private owe(id: ControlId | undefined, inEffect: () => boolean): void {
    this.answers.owe(id, () => !this.active || inEffect());
  }

  /** Sends the owed answer when it is due (or `flush`), as a status event that repeats the current state. */
  private answer(flush = false): void {
    this.emitStatus(this.currentStatus, false, flush);
  }

  /** Sends a status on a change (or `force`); an owed answer that is due rides along on it. */
  private emitStatus(status: ReplayStatus, force = false, flush = false): void {
    if (this.closed) return;
    const changed = status !== this.currentStatus;
    this.currentStatus = status;
    const id = this.answers.take(flush);
    if (!changed && !force && id === undefined) return;
    const event: StatusEvent = { status, time: this.positionUs / 1000, rate: this.rate, dropped: this.dropped };
    if (id !== undefined) event.id = id;
    this.out.status(event);
  }
}
