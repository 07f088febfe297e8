import { BagError, type Frame } from '@vlink/bag';
import type { Lease } from '../store/bag-store.js';
import { QueryCursor } from '../messages/query-cursor.js';
import { Waiter, yieldToEventLoop } from './waiter.js';

export type ReplayStatus = 'playing' | 'paused' | 'stopped';

/** What a client asks to play. Times in ms since recording start. */
export interface ReplayConfig {
  /** Speed multiplier; 0 = as fast as the client reads (VLink `force_delay = 0`). Default 1. */
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
}

export interface StatusEvent {
  status: ReplayStatus;
  /** Timestamp of the last frame sent, or the seek target (ms since recording start). */
  time: number;
  rate: number;
  /** Frames skipped so far because the client was too slow (paced replay only). */
  dropped: number;
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
/** A busy rate-0 replay gives the event loop back after this many bytes, so other clients keep their pace. */
const YIELD_BYTES = 4 * 1024 * 1024;
const YIELD_FRAMES = 256;
/** Waits shorter than this are not worth a timer: the frame is sent now. */
const MIN_WAIT_MS = 1;

const now = () => performance.now();

/**
 * One client's replay with VLink's controls (play, pause, resume, step = `pause_to_next`, seek = `jump`, rate, stop)
 * and VLink's pacing (§7.3): a frame is due at `anchorWall + (t − anchorMedia) / rate`; pauses, seeks and rate changes
 * re-anchor at the current media time so the timeline continues where it was.
 *
 * Backpressure: with rate 0 the loop waits until the transport drains (nothing is lost; the client sets the pace);
 * a paced replay drops frames while more than SEND_BUFFER_HIGH bytes are queued and counts them in `dropped`, so a
 * slow client still sees "now" rather than an ever-growing delay.
 */
export class ReplaySession {
  private config: ReplayConfig | undefined;
  private lease: Lease | undefined;
  private generation = 0;
  private active = false;
  private paused = false;
  private steps = 0;
  private rate = 1;
  private anchorMedia = 0;
  private anchorWall = 0;
  private pausedMedia = 0;
  private positionUs = 0;
  private dropped = 0;
  private lastDropReport = 0;
  private currentStatus: ReplayStatus = 'stopped';
  /** Counted across passes: a loop of short passes at rate 0 must still give the event loop back. */
  private sinceYieldBytes = 0;
  private sinceYieldFrames = 0;
  private closed = false;
  /** The loop currently running (or finishing); a new loop waits for it so one reader never has two cursors. */
  private running: Promise<void> = Promise.resolve();
  private readonly waiter = new Waiter();

  constructor(private readonly source: ReplaySource, private readonly out: ReplayOutput) {}

  get status(): ReplayStatus {
    return this.currentStatus;
  }

  play(config: ReplayConfig): void {
    if (this.closed) return;
    if (this.active) this.out.finished(true, this.dropped);
    this.config = config;
    this.rate = config.rate;
    this.paused = config.paused;
    this.steps = 0;
    this.dropped = 0;
    this.start(Math.round(config.beginMs * 1000));
  }

  pause(): void {
    if (!this.active || this.paused) return;
    this.pausedMedia = this.mediaNow();
    this.paused = true;
    this.waiter.wake();
  }

  resume(): void {
    if (!this.active || !this.paused) return;
    this.paused = false;
    this.steps = 0;
    this.waiter.wake();
  }

  /** Sends exactly one frame while paused (VLink `pause_to_next`). */
  step(): void {
    if (!this.active || !this.paused) throw new BagError('INVALID_ARGUMENT', 'step works only while paused');
    this.steps++;
    this.waiter.wake();
  }

  /** Continues from `ms` (clamped to the recording), keeping pause state and rate (VLink `jump`). */
  async seek(ms: number): Promise<void> {
    if (this.closed) return;
    const duration = await this.source.durationMs();
    let target = Math.min(Math.max(0, ms), duration);
    if (ms > duration) target = Math.max(0, duration - 100);
    if (!this.config) {
      // Seeking before any play opens a paused replay at that point (a player's scrubber).
      this.config = { rate: 1, beginMs: 0, times: 1, paused: true };
      this.rate = 1;
      this.paused = true;
    }
    this.start(Math.round(target * 1000));
  }

  setRate(rate: number): void {
    const media = this.mediaNow();
    this.rate = rate;
    if (this.config) this.config.rate = rate;
    this.anchor(media);
    this.waiter.wake();
    if (this.active) this.emitStatus(this.currentStatus, true);
  }

  stop(): void {
    if (!this.active) return;
    this.generation++;
    this.active = false;
    this.waiter.wake();
    this.emitStatus('stopped');
    this.out.finished(true, this.dropped);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.generation++;
    this.active = false;
    this.waiter.wake();
    // Released once the loop has closed its cursor.
    void this.running.finally(() => {
      this.lease?.release();
      this.lease = undefined;
    });
  }

  private start(beginUs: number): void {
    const generation = ++this.generation;
    this.active = true;
    this.positionUs = beginUs;
    this.waiter.wake();
    const previous = this.running;
    this.running = previous.then(() => this.run(generation, beginUs)).catch((error: unknown) => {
      if (generation !== this.generation) return;
      this.active = false;
      this.out.error(BagError.wrap(error, 'IO_ERROR', 'replay failed'));
      this.emitStatus('stopped');
      this.out.finished(true, this.dropped);
    });
  }

  private async run(generation: number, beginUs: number): Promise<void> {
    const config = this.config!;
    const live = () => generation === this.generation;
    if (!live()) return;
    this.lease ??= await this.source.lease();
    if (!live() || this.closed) return;
    const endUs = config.endMs !== undefined ? Math.round(config.endMs * 1000) : undefined;
    this.emitStatus(this.paused ? 'paused' : 'playing', true);
    for (let pass = 1; ; pass++) {
      const end = await this.pass(generation, beginUs, endUs, config.urls);
      if (!live() || end === 'interrupted') return;
      // An empty window ends the session (VLink: no data → stopped) instead of looping on nothing.
      if (end === 'empty' || (config.times > 0 && pass >= config.times)) break;
      await yieldToEventLoop();
      if (!live()) return;
      this.emitStatus('stopped');
      beginUs = Math.round(config.beginMs * 1000);
      this.emitStatus(this.paused ? 'paused' : 'playing');
    }
    this.active = false;
    this.emitStatus('stopped', true);
    this.out.finished(false, this.dropped);
  }

  /** One pass over the window. */
  private async pass(generation: number, beginUs: number, endUs: number | undefined, urls: string[] | undefined): Promise<'done' | 'empty' | 'interrupted'> {
    const live = () => generation === this.generation;
    const query: { urls?: string[]; beginUs: number; endUs?: number } = { beginUs };
    if (urls) query.urls = urls;
    if (endUs !== undefined) query.endUs = endUs;
    const cursor = new QueryCursor(this.lease!.reader, query);
    this.anchor(beginUs);
    let any = false;
    try {
      for (;;) {
        const frame = await cursor.next();
        if (!live()) return 'interrupted';
        if (!frame) return any ? 'done' : 'empty';
        any = true;
        const stepped = await this.gate(frame.timestamp, live);
        if (!live()) return 'interrupted';
        if (this.rate === 0 || stepped) {
          while (this.out.buffered() > SEND_BUFFER_HIGH) {
            await this.waiter.wait(2);
            if (!live()) return 'interrupted';
          }
        } else if (this.out.buffered() > SEND_BUFFER_HIGH) {
          this.drop(frame.timestamp);
          continue;
        }
        this.out.frame(frame);
        this.positionUs = frame.timestamp;
        if (stepped) {
          this.anchor(frame.timestamp);
          this.pausedMedia = frame.timestamp;
          this.emitStatus('paused', true);
        } else if (this.currentStatus !== 'playing' && !this.paused) this.emitStatus('playing');
        this.sinceYieldBytes += frame.data.length;
        if (++this.sinceYieldFrames >= YIELD_FRAMES || this.sinceYieldBytes >= YIELD_BYTES) {
          this.sinceYieldBytes = this.sinceYieldFrames = 0;
          await yieldToEventLoop();
          if (!live()) return 'interrupted';
        }
      }
    } finally {
      await cursor.close();
    }
  }

  /** Waits until `t` is due (or a step/pause/control wakes us); true when this frame is a step. */
  private async gate(t: number, live: () => boolean): Promise<boolean> {
    for (;;) {
      if (!live()) return false;
      if (this.paused) {
        if (this.steps > 0) {
          this.steps--;
          return true;
        }
        this.emitStatus('paused');
        await this.waiter.wait();
        if (!this.paused) this.anchor(Math.min(this.pausedMedia, t));
        continue;
      }
      if (this.rate === 0) return false;
      const waitMs = this.anchorWall + (t - this.anchorMedia) / this.rate / 1000 - now();
      if (waitMs < MIN_WAIT_MS) return false;
      await this.waiter.wait(waitMs);
    }
  }

  private drop(t: number): void {
    this.dropped++;
    this.positionUs = t;
    const wall = now();
    if (wall - this.lastDropReport >= 1000) {
      this.lastDropReport = wall;
      this.emitStatus(this.currentStatus, true);
    }
  }

  private mediaNow(): number {
    if (this.paused) return this.pausedMedia;
    if (this.rate === 0 || !this.active) return this.positionUs;
    return this.anchorMedia + (now() - this.anchorWall) * 1000 * this.rate;
  }

  private anchor(mediaUs: number): void {
    this.anchorMedia = mediaUs;
    this.anchorWall = now();
  }

  private emitStatus(status: ReplayStatus, force = false): void {
    if (status === this.currentStatus && !force) return;
    this.currentStatus = status;
    this.out.status({ status, time: this.positionUs / 1000, rate: this.rate, dropped: this.dropped });
  }
}
