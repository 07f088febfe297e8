import { BagWriter, type BagError, type BagWriterOptions, type Frame, type SchemaData } from '@vlink/bag';
import { CliError } from './errors.js';
import { formatDuration, formatRate, formatSize } from './format.js';
import { listenKeys } from './keyboard.js';
import { StatusLine } from './status-line.js';

export interface RecordSessionOptions {
  out: string;
  writer: BagWriterOptions;
  /** Stop after this many seconds (0/undefined = until the source ends or the user stops). */
  durationS?: number;
  /** Draw the status line and read keys (a terminal, not `--quiet`). */
  interactive: boolean;
  /** Read Space/q/Esc/Ctrl-C from stdin (not when stdin carries the data). */
  keys: boolean;
  /** Runs once the writer exists (binds `--plugin`, `--import-schema`). */
  setup?: (writer: BagWriter) => void;
  /** `-x/--max-packet-size`: frames with larger payloads are not recorded, and counted (0/undefined = no limit). */
  maxPacketSize?: number;
}

/**
 * One recording: owns the `BagWriter`, the pause state, the live status line, the keys and the stop conditions
 * (Space pauses, `q`/Esc/Ctrl-C/SIGINT/SIGTERM stop, `-d` elapses, the source ends). Stopping always closes the file
 * cleanly (header `complete`), so an interrupted recording is a valid bag.
 */
export class RecordSession {
  private writer: BagWriter | undefined;
  private opening: Promise<void> | undefined;
  private readonly status: StatusLine;
  private readonly cleanups: Array<() => void> = [];
  private stopReason: string | undefined;
  private resolveStopped!: (reason: string) => void;
  /** Resolves with the reason once a stop was asked for. */
  readonly stopped: Promise<string>;
  private readonly startedAt = Date.now();
  private pausedAt: number | undefined;
  private pausedTotal = 0;
  private firstError: BagError | undefined;
  frames = 0;
  bytes = 0;
  skippedWhilePaused = 0;
  /** Frames left out for `-x/--max-packet-size`. */
  oversize = 0;
  refused = 0;

  constructor(private readonly options: RecordSessionOptions) {
    this.status = new StatusLine(options.interactive);
    this.stopped = new Promise((resolve) => (this.resolveStopped = resolve));
    const onSignal = () => this.stop('interrupted');
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    this.cleanups.push(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    if (options.interactive && options.keys) {
      this.cleanups.push(
        listenKeys((key) => {
          if (key === 'space') this.togglePause();
          else if (key === 'q' || key === 'escape' || key === 'ctrl-c') this.stop('stopped by user');
        }),
      );
    }
    if (options.interactive) {
      const ticker = setInterval(() => this.draw(), 250);
      this.cleanups.push(() => clearInterval(ticker));
    }
  }

  /** Creates the file; `overrides` come from the source (a `meta` line, a server's recording start). */
  /** Creates the file once; concurrent callers share the same opening (later `overrides` are ignored). */
  open(overrides: Partial<BagWriterOptions> = {}): Promise<void> {
    this.opening ??= (async () => {
      const writer = await BagWriter.create(this.options.out, { ...overrides, ...this.options.writer });
      writer.registerErrorCallback((error) => {
        this.firstError ??= error;
        if (writer.fail()) this.stop(`storage error: ${error.message}`);
      });
      this.options.setup?.(writer);
      this.writer = writer;
      // `-d` counts from the moment the file can take frames.
      const seconds = this.options.durationS;
      if (seconds && seconds > 0 && this.stopReason === undefined) {
        const timer = setTimeout(() => this.stop(`duration of ${seconds} s reached`), seconds * 1000);
        this.cleanups.push(() => clearTimeout(timer));
      }
      this.draw(true);
    })();
    return this.opening;
  }

  get isOpen(): boolean {
    return this.writer !== undefined;
  }

  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  get isStopping(): boolean {
    return this.stopReason !== undefined;
  }

  togglePause(): void {
    if (this.pausedAt === undefined) this.pausedAt = Date.now();
    else {
      this.pausedTotal += Date.now() - this.pausedAt;
      this.pausedAt = undefined;
    }
    this.draw(true);
  }

  stop(reason: string): void {
    if (this.stopReason !== undefined) return;
    this.stopReason = reason;
    this.resolveStopped(reason);
  }

  /**
   * Records a frame without ever dropping it for a full queue (`BagWriter.write`): resolves once the writer took it,
   * which is at once while its queue is below the high-water mark. Skipped (and counted) while paused. Frames still
   * arrive after a stop was asked for, from what the source had already received; sources stop producing new ones.
   */
  write(frame: Frame): Promise<void> {
    if (!this.writer) return Promise.resolve();
    if (this.paused) {
      this.skippedWhilePaused++;
      return Promise.resolve();
    }
    const size = frame.data.byteLength;
    if (this.options.maxPacketSize && size > this.options.maxPacketSize) {
      this.oversize++;
      return Promise.resolve();
    }
    return this.writer.write(frame).then(
      () => {
        this.frames++;
        this.bytes += size;
      },
      (error: unknown) => {
        // `write` waits instead of dropping, so a refusal is the frame's own fault (a time past what the file holds,
        // an empty url): said at once, counted by cause at the end, and the exit status says it (record.ts).
        if (this.refused++ === 0)
          this.status.log(`warning: a frame was refused: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  /** True while the writer's queue is above its high-water mark: a source that can should pause until `ready()`. */
  get mustWait(): boolean {
    return this.writer?.writableNeedDrain ?? false;
  }

  ready(): Promise<void> {
    return this.writer?.ready() ?? Promise.resolve();
  }

  pushSchema(schema: SchemaData): void {
    if (this.writer && !this.writer.pushSchema(schema))
      this.status.log(`warning: schema ${schema.name} conflicts with one already recorded; kept the first`);
  }

  setUrlLoss(url: string, loss: number): void {
    this.writer?.setUrlLoss(url, loss);
  }

  /** Closes the file and tears down keys, signals and timers; throws when storage failed. */
  async finish(): Promise<{
    frames: number;
    bytes: number;
    dropped: number;
    droppedBy: Record<string, number>;
    reason: string;
  }> {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    const reason = this.stopReason ?? 'source ended';
    if (this.writer) await this.writer.close();
    this.status.finish(this.line());
    const stats = this.writer?.stats();
    // The writer counts every refusal (queue full, limits, closed) by reason; ours are among them.
    const dropped = stats ? Object.values(stats.dropped).reduce((a, b) => a + b, 0) : this.refused;
    const droppedBy = Object.fromEntries(Object.entries(stats?.dropped ?? {}).filter(([, n]) => n > 0));
    if (this.writer?.fail()) {
      throw new CliError(
        `recording failed: ${this.firstError?.message ?? 'storage error'}`,
        this.options.out,
        undefined,
        { cause: this.firstError },
      );
    }
    return { frames: stats?.writtenFrames ?? 0, bytes: stats?.writtenBytes ?? 0, dropped, droppedBy, reason };
  }

  log(message: string): void {
    this.status.log(message);
  }

  private draw(force = false): void {
    this.status.set(this.line(), force);
  }

  private line(): string {
    const now = Date.now();
    const elapsedMs = now - this.startedAt - this.pausedTotal - (this.pausedAt !== undefined ? now - this.pausedAt : 0);
    const seconds = Math.max(0.001, elapsedMs / 1000);
    const stats = this.writer?.stats();
    const drops = stats ? Object.values(stats.dropped).reduce((a, b) => a + b, 0) : 0;
    const state =
      this.stopReason !== undefined ? 'Stopping' : this.paused ? 'Paused' : this.writer ? 'Recording' : 'Waiting';
    return (
      `${state} ${formatDuration(elapsedMs, false)} | ${this.frames} frames | ${formatSize(this.bytes)} | ` +
      `${(this.frames / seconds).toFixed(1)} fps ${formatRate(this.bytes / seconds)} | ${drops} drops` +
      (this.paused ? ' | Space: resume, q: stop' : '')
    );
  }
}
