import { scheduleSoon } from '../util/schedule.js';

/** Below this the lead is not worth lowering: timer jitter alone is about this large on every runtime we test. */
const MIN_LEAD_MS = 0.1;
/** Above this a runtime's timers are too coarse to chase; precision degrades instead of CPU use growing. */
const MAX_LEAD_MS = 2;
/** Share of wall time the final polling may take (per window) before waits fall back to plain timers. */
const MAX_POLL_SHARE = 0.25;
const POLL_WINDOW_MS = 500;
const LATENESS_SAMPLES = 64;

const now = () => performance.now();

/**
 * An interruptible, precise wait for the playback loop: `sleepUntil(deadline)` resolves at a `performance.now()`
 * deadline or as soon as `wake()` is called, whichever comes first.
 *
 * Why a hybrid: `setTimeout` alone fires up to ~1 ms early (Node and Bun truncate fractional delays and measure from
 * a cached loop time) and 0.1–2 ms late, which misses the 1 ms emission goal. So the bulk of a wait is a timer aimed
 * `lead` ms before the deadline, and the last stretch polls with `setImmediate`, which lets I/O and other callbacks
 * run between polls (the event loop is never blocked). The lead adapts to the timer lateness this runtime shows, and
 * polling may use at most {@link MAX_POLL_SHARE} of wall time per window, after which waits use plain timers: a
 * dense stream then costs some precision instead of a busy core.
 */
export class Alarm {
  private wakeCurrent: (() => void) | undefined;
  private readonly lateness = new Float64Array(LATENESS_SAMPLES);
  private latenessCount = 0;
  private leadMs = 1;
  private windowStart = now();
  private polledMs = 0;

  /** Resolves once `performance.now() >= deadline`, or earlier on `wake()`. */
  sleepUntil(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (this.wakeCurrent === finish) this.wakeCurrent = undefined;
        resolve();
      };
      const step = () => {
        if (settled) return;
        timer = undefined;
        const t = now();
        const remaining = deadline - t;
        if (remaining <= 0) return finish();
        if (remaining - this.leadMs >= 1) {
          const delay = Math.floor(remaining - this.leadMs);
          const target = t + delay;
          timer = setTimeout(() => {
            this.recordLateness(now() - target);
            step();
          }, delay);
        } else if (this.mayPoll(t)) {
          scheduleSoon(() => {
            if (!settled) this.polledMs += now() - t;
            step();
          });
        } else {
          // Over the polling budget: a plain timer, late by up to a millisecond or so.
          timer = setTimeout(step, Math.max(1, Math.round(remaining)));
        }
      };
      this.wakeCurrent = finish;
      step();
    });
  }

  /** Resolves on the next `wake()` (a pause, or waiting for a command). */
  block(): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        if (this.wakeCurrent === finish) this.wakeCurrent = undefined;
        resolve();
      };
      this.wakeCurrent = finish;
    });
  }

  /** Ends the current wait now (a control command arrived). No-op when nothing waits. */
  wake(): void {
    this.wakeCurrent?.();
  }

  /** Current timer lead in ms (for diagnostics and the benchmark). */
  get lead(): number {
    return this.leadMs;
  }

  private mayPoll(t: number): boolean {
    if (t - this.windowStart >= POLL_WINDOW_MS) {
      this.windowStart = t;
      this.polledMs = 0;
    }
    return this.polledMs < MAX_POLL_SHARE * POLL_WINDOW_MS;
  }

  private recordLateness(ms: number): void {
    this.lateness[this.latenessCount++ % LATENESS_SAMPLES] = ms;
    if (this.latenessCount % 16 !== 0) return;
    const n = Math.min(this.latenessCount, LATENESS_SAMPLES);
    const sorted = Array.from(this.lateness.subarray(0, n)).sort((a, b) => a - b);
    const p95 = sorted[Math.min(n - 1, Math.floor(n * 0.95))]!;
    this.leadMs = Math.min(MAX_LEAD_MS, Math.max(MIN_LEAD_MS, p95 + 0.1));
  }
}
