/**
 * A single live line on stderr (record's and play's status), redrawn in place at most 10 times a second. Drawn only on
 * a terminal; `finish()` leaves the last state on screen and moves to a new line.
 */
export class StatusLine {
  private last = 0;
  private drawn = false;
  private pending: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  /** Redraws now when `force`, else at most every 100 ms (the latest text wins). */
  set(text: string, force = false): void {
    if (!this.enabled || this.finished) return;
    this.pending = text;
    const now = Date.now();
    if (force || now - this.last >= 100) {
      this.draw();
      return;
    }
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        this.draw();
      },
      100 - (now - this.last),
    );
  }

  private finished = false;

  /** Draws the final state (once) and ends the line; later calls do nothing. */
  finish(text?: string): void {
    if (!this.enabled || this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (text !== undefined) this.pending = text;
    this.draw();
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }

  /** Prints a message above the status line without breaking it. */
  log(message: string): void {
    if (!this.enabled) {
      this.stream.write(`${message}\n`);
      return;
    }
    this.stream.write(`\r\x1b[2K${message}\n`);
    if (this.pending !== undefined) this.draw();
  }

  private draw(): void {
    if (this.pending === undefined) return;
    this.last = Date.now();
    const width = this.stream.columns || 120;
    const text = this.pending.length >= width ? this.pending.slice(0, Math.max(10, width - 1)) : this.pending;
    this.stream.write(`\r\x1b[2K${text}`);
    this.drawn = true;
  }
}
