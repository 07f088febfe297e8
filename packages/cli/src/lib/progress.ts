import cliProgress from 'cli-progress';

/** Whether live terminal output (bars, status lines) may be drawn: stderr is a terminal and not `--quiet`/`--json`. */
export function liveOutput(quiet: boolean | undefined): boolean {
  return !quiet && process.stderr.isTTY === true;
}

/** A progress bar on stderr (cli-progress) that does nothing when the output is not live. */
export class Progress {
  private readonly bar: cliProgress.SingleBar | undefined;
  private started = false;

  constructor(enabled: boolean, label: string) {
    if (!enabled) return;
    this.bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {frames} frames | {detail}`,
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: false,
        fps: 10,
        barsize: 30,
      },
      cliProgress.Presets.shades_classic,
    );
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
