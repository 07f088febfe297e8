const now = () => performance.now();

/**
 * The timing state of one pass (format reference §7.3): "play time" is wall time since the pass began minus the time spent
 * paused. Freezing it at `pause()` is what makes a pause during a wait remember the remaining wait: after `resume()`
 * the same frame is still exactly that far away.
 */
export class PassClock {
  private readonly origin: number;
  private pausedMs = 0;
  private frozen: number | undefined;

  constructor(
    /** The pass's begin in µs since recording start. */
    readonly beginUs: number,
    readonly rate: number,
    t = now(),
  ) {
    this.origin = t;
  }

  /** Play time in ms (wall time since the pass began, excluding pauses). */
  elapsed(t = now()): number {
    return (this.frozen ?? t) - this.origin - this.pausedMs;
  }

  /** Play time at which a frame is due: `(timestamp − begin) / rate`, in ms. */
  dueMs(timestampUs: number): number {
    return (timestampUs - this.beginUs) / 1000 / this.rate;
  }

  /** Wall time (`performance.now()`) at which a frame is due, assuming no further pause. */
  deadline(timestampUs: number): number {
    return this.origin + this.pausedMs + this.dueMs(timestampUs);
  }

  /** Wall time the clock was frozen at, if it is frozen. */
  get frozenAt(): number | undefined {
    return this.frozen;
  }

  freeze(t = now()): void {
    this.frozen ??= t;
  }

  unfreeze(t = now()): void {
    if (this.frozen === undefined) return;
    this.pausedMs += t - this.frozen;
    this.frozen = undefined;
  }

  /** A step emits a frame early: count it as on time, so the frames after it keep their spacing. */
  advanceTo(dueMs: number, t = now()): void {
    const behind = dueMs - this.elapsed(t);
    if (behind > 0) this.pausedMs -= behind;
  }
}
