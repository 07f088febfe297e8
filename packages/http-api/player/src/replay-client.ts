// The layout lives in one place: the wire module of @vlink/bag-decode (its imports are type-only).
import { decodeFrameAt, type DecodedFrame } from '../../../decode/src/binary-frame.js';
import { replayUrl } from './api.js';

/** While only frames arrive, the page hears about them this often. */
const FRAME_NOTIFY_MS = 100;

export type ReplayState = 'connecting' | 'stopped' | 'playing' | 'paused' | 'closed';

export interface PlayOptions {
  /** 0 = as fast as the page reads. */
  rate: number;
  beginMs: number;
  endMs: number;
  /** Empty = all. */
  urls: string[];
  loop: boolean;
}

/** What the UI reads; a new object after every change (cheap to compare). */
export interface ReplaySnapshot {
  state: ReplayState;
  rate: number;
  dropped: number;
  /** Frames received since the bag was opened. */
  received: number;
  /** The latest frame per url (each one owns its buffer: a WebSocket message). */
  latest: ReadonlyMap<string, DecodedFrame>;
  lastError?: string;
  finished: boolean;
}

/**
 * One WebSocket replay (`WS /v1/bags/{id}/replay`). Frames only update the latest frame per url and the position;
 * listeners hear about it at most once per animation frame, so a rate-0 replay of a big bag never floods the UI.
 *
 * The position is the last frame's time (or the status event's), run forward by the wall clock × rate while
 * playing, so the cursor moves smoothly through sparse urls and gaps.
 */
export class ReplayClient {
  private readonly ws: WebSocket;
  private snapshot: ReplaySnapshot = {
    state: 'connecting',
    rate: 1,
    dropped: 0,
    received: 0,
    latest: new Map(),
    finished: false,
  };
  private readonly latest = new Map<string, DecodedFrame>();
  private anchorMs = 0;
  private anchorWall = 0;
  private endMs = Infinity;
  private scheduled: 'soon' | 'later' | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private received = 0;
  private readonly listeners = new Set<(s: ReplaySnapshot) => void>();
  /** Commands wait here until the socket is open. */
  private readonly pending: string[] = [];
  /** Every command carries an id; the server echoes it on the status event that shows the command in effect. */
  private nextId = 1;
  /** What to do once a command is in effect, by its id (dropped when the command fails). */
  private readonly followUps = new Map<number, () => void>();
  private stepWhenOpen = false;

  constructor(
    readonly bagId: string,
    durationMs: number,
  ) {
    this.endMs = durationMs;
    this.ws = new WebSocket(replayUrl(bagId));
    this.ws.binaryType = 'arraybuffer';
    this.ws.onopen = () => {
      for (const text of this.pending.splice(0)) this.ws.send(text);
    };
    this.ws.onmessage = (event) =>
      typeof event.data === 'string' ? this.onEvent(event.data) : this.onFrame(event.data as ArrayBuffer);
    this.ws.onclose = (event) => {
      this.update({
        state: 'closed',
        ...(event.code !== 1000 && event.code !== 1005
          ? { lastError: `connection closed (${event.code}${event.reason ? `: ${event.reason}` : ''})` }
          : {}),
      });
    };
  }

  get current(): ReplaySnapshot {
    return this.snapshot;
  }

  subscribe(listener: (s: ReplaySnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** ms since recording start: the replay position now. */
  position(now = performance.now()): number {
    const s = this.snapshot;
    if (s.state !== 'playing' || s.rate === 0) return this.anchorMs;
    return Math.min(this.endMs, this.anchorMs + (now - this.anchorWall) * s.rate);
  }

  /**
   * Starts a replay of [beginMs, endMs] and, when `atMs` is later than `beginMs`, moves to it before playing, so a
   * loop still covers the whole window. `paused` leaves it paused there.
   */
  play(options: PlayOptions, atMs: number, paused: boolean): void {
    const at = Math.max(options.beginMs, atMs);
    const moveFirst = at > options.beginMs;
    const stepThen = this.stepWhenOpen;
    this.stepWhenOpen = false;
    // What comes next waits for the play's answer: a seek sent before the new pass has started would race it.
    const goOn = () => {
      if (stepThen) this.send({ op: 'step' });
      else if (moveFirst && !paused) this.send({ op: 'resume' });
    };
    const play = {
      op: 'play',
      rate: options.rate,
      begin: options.beginMs,
      end: options.endMs,
      urls: options.urls,
      times: options.loop ? 0 : 1,
      paused: paused || moveFirst || stepThen,
    };
    const moveThere = () => {
      // The pass reported its start; the cursor stays where the seek is going, not back at the window start.
      this.setAnchor(at);
      this.send({ op: 'seek', time: at }, goOn);
    };
    this.send(play, moveFirst ? moveThere : goOn);
    this.setAnchor(at);
    this.update({ finished: false, rate: options.rate });
  }

  pause(): void {
    this.send({ op: 'pause' });
  }

  resume(): void {
    this.send({ op: 'resume' });
  }

  /** One frame; while stopped, `open` first starts a paused replay at the position (it calls `play`). */
  step(open?: () => void): void {
    if (this.snapshot.state === 'paused') this.send({ op: 'step' });
    else if (open) {
      this.stepWhenOpen = true;
      open();
    }
  }

  seek(ms: number): void {
    this.setAnchor(ms);
    this.send({ op: 'seek', time: ms });
    this.notify(true);
  }

  setRate(rate: number): void {
    this.anchorMs = this.position();
    this.anchorWall = performance.now();
    this.send({ op: 'rate', rate });
  }

  stop(): void {
    this.send({ op: 'stop' });
  }

  close(): void {
    this.listeners.clear();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.ws.onmessage = null;
    this.ws.onclose = null;
    this.ws.close(1000);
  }

  /** Sends `command` with a fresh id; `then` runs once the server's answer says it is in effect. */
  private send(command: Record<string, unknown>, then?: () => void): void {
    const id = this.nextId++;
    if (then) this.followUps.set(id, then);
    const text = JSON.stringify({ ...command, id });
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.pending.push(text);
  }

  private setAnchor(ms: number): void {
    this.anchorMs = Math.max(0, Math.min(ms, this.endMs));
    this.anchorWall = performance.now();
  }

  private onFrame(buffer: ArrayBuffer): void {
    const decoded = decodeFrameAt(new Uint8Array(buffer));
    if (!decoded) return;
    const frame = decoded.frame;
    this.latest.set(frame.url, frame);
    this.anchorMs = frame.timestamp / 1000;
    this.anchorWall = performance.now();
    this.received++;
    this.notify(false);
  }

  private onEvent(text: string): void {
    let event: {
      event: string;
      id?: number | string;
      status?: ReplayState;
      time?: number;
      rate?: number;
      dropped?: number;
      interrupted?: boolean;
      code?: string;
      message?: string;
    };
    try {
      event = JSON.parse(text);
    } catch {
      return;
    }
    if (event.event === 'status') {
      this.setAnchor(event.time ?? 0);
      this.update({ state: event.status!, rate: event.rate ?? this.snapshot.rate, dropped: event.dropped ?? 0 });
      const then = typeof event.id === 'number' ? this.followUps.get(event.id) : undefined;
      if (then) {
        this.followUps.delete(event.id as number);
        then();
      }
    } else if (event.event === 'finished') {
      // An interrupted pass is one a new play replaced: the new one reports its own status.
      if (!event.interrupted) this.update({ state: 'stopped', finished: true, dropped: event.dropped ?? 0 });
    } else if (event.event === 'error') {
      // A failed command's follow-ups are dropped with it (a play that failed is not seeked into).
      if (typeof event.id === 'number') this.followUps.delete(event.id);
      this.update({ lastError: `${event.code}: ${event.message}` });
    }
  }

  private update(patch: Partial<ReplaySnapshot>): void {
    this.snapshot = { ...this.snapshot, ...patch };
    this.notify(true);
  }

  /**
   * Listeners hear at the next animation frame after a state change, and at most every FRAME_NOTIFY_MS while only
   * frames arrive: the page re-renders ~10 times a second during a fast replay, not once per message.
   */
  private notify(urgent: boolean): void {
    if (this.scheduled === 'soon' || (this.scheduled === 'later' && !urgent)) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const flush = () => {
      this.scheduled = undefined;
      this.timer = undefined;
      if (this.snapshot.received !== this.received)
        this.snapshot = { ...this.snapshot, received: this.received, latest: this.latest };
      const s = this.snapshot;
      for (const listener of this.listeners) listener(s);
    };
    if (urgent) {
      this.scheduled = 'soon';
      requestAnimationFrame(flush);
    } else {
      this.scheduled = 'later';
      this.timer = setTimeout(flush, FRAME_NOTIFY_MS);
    }
  }
}
