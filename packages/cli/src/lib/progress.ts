import cliProgress from 'cli-progress';
import { StatusLine } from './status-line.js';
import type { MaintenanceProgress } from '@vlink/bag';
import { formatSize } from './format.js';

/** Whether live terminal output (bars, status lines) may be drawn: stderr is a terminal and not `--quiet`/`--json`. */
export function liveOutput(quiet: boolean | undefined): boolean {
  return !quiet && process.stderr.isTTY === true;
}

/** The look every bar of the CLI shares (cli-progress on stderr), with its own line format. */
function stderrBar(format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    { format, stream: process.stderr, hideCursor: true, clearOnComplete: false, fps: 10, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
}

/** A progress bar on stderr (cli-progress) that does nothing when the output is not live. */
export class Progress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private started = false;

  constructor(enabled: boolean, label: string) {
    if (!enabled) return;
    this.bar = stderrBar(`${label} [{bar}] {percentage}% | {frames} frames | {detail}`);
  }

  start(total: number): void {
    if (!this.bar) return;
    this.bar.start(Math.max(1, total), 0, { frames: 0, detail: '' });
    this.started = true;
  }

  update(value: number, frames: number, detail = ''): void {
    if (this.bar && this.started) this.bar.update(value, { frames, detail });
  }

  stop(): void {
    if (this.bar && this.started) {
      this.bar.stop();
      this.started = false;
    }
  }
}

/**
 * An activity line on stderr for work core does not report in steps (the quick check): what is being
 * done and for how long, redrawn while the event loop is free. Nothing when the output is not live.
 */
export class Activity {
  private readonly status: StatusLine;
  private readonly startedAt = Date.now();
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    enabled: boolean,
    private readonly label: string,
  ) {
    this.status = new StatusLine(enabled);
    if (!enabled) return;
    this.draw(true);
    this.timer = setInterval(() => this.draw(), 200);
  }

  private draw(force = false): void {
    this.status.set(`${this.label} … ${((Date.now() - this.startedAt) / 1000).toFixed(1)} s`, force);
  }

  /** Ends the line with the time taken. */
  stop(outcome = 'done'): void {
    if (this.timer) clearInterval(this.timer);
    this.status.finish(`${this.label}: ${outcome} in ${((Date.now() - this.startedAt) / 1000).toFixed(1)} s`);
  }
}

/**
 * A bar on stderr for a maintenance run that reports its steps (core's `onProgress`: rows, bytes or segments): drawn
 * from the first report on, so a run that reports nothing draws nothing. Nothing when the output is not live.
 */
export class StepBar {
  private readonly bar: cliProgress.SingleBar | undefined;
  private started = false;

  constructor(enabled: boolean, label: string) {
    if (!enabled) return;
    this.bar = stderrBar(`${label} [{bar}] {percentage}% | {amount} | {duration_formatted}`);
  }

  /** The callback to hand to core (`verify({ onProgress })`); undefined when nothing is drawn. */
  get onProgress(): ((p: MaintenanceProgress) => void) | undefined {
    return this.bar ? (p) => this.update(p) : undefined;
  }

  private update({ done, total, unit }: MaintenanceProgress): void {
    if (!this.bar) return;
    const amount = unit === 'bytes' ? `${formatSize(done)} / ${formatSize(total)}` : `${fixed(done)}/${total} ${unit}`;
    if (!this.started) {
      this.bar.start(Math.max(1, total), 0, { amount });
      this.started = true;
    }
    this.bar.setTotal(Math.max(1, total));
    this.bar.update(done, { amount });
  }

  stop(): void {
    if (this.bar && this.started) {
      this.bar.stop();
      this.started = false;
    }
  }
}

function fixed(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
