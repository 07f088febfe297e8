import type { BagWriterOptions, Frame, SchemaData, TriggerRecorder } from '@vlink/bag';
import type { LiveSink } from './live-sink.js';

/**
 * A live source's frames into a `TriggerRecorder`'s rings instead of a file: every frame is stamped on arrival
 * (the recorder clock), so the pre window is "the last N seconds received" whatever timeline the source had.
 */
export class TriggerSink implements LiveSink {
  readonly stopped: Promise<string>;
  private resolveStopped!: (reason: string) => void;
  private stopReason: string | undefined;
  private opened = false;
  frames = 0;
  refused = 0;

  constructor(
    private readonly recorder: TriggerRecorder,
    private readonly logLine: (message: string) => void,
    onTrigger?: (params: Record<string, unknown>) => void,
  ) {
    this.stopped = new Promise((resolve) => (this.resolveStopped = resolve));
    if (onTrigger) this.onTriggerLine = onTrigger;
  }

  onTriggerLine?: (params: Record<string, unknown>) => void;

  get isOpen(): boolean {
    return this.opened;
  }
  get isStopping(): boolean {
    return this.stopReason !== undefined;
  }
  get mustWait(): boolean {
    return false;
  }

  async open(_overrides?: Partial<BagWriterOptions>): Promise<void> {
    this.opened = true;
  }

  async write(frame: Frame): Promise<void> {
    // The publish time counts from the source's start, which the recorder clock does not share: kept, it would be
    // moved with the arrival time's base and give latencies of seconds. Left out, it reads back as the log time.
    const { publishTime: _sourceBase, ...arrived } = frame;
    if (this.recorder.ingest({ ...arrived, timestamp: -1 })) this.frames++;
    else this.refused++;
  }

  async ready(): Promise<void> {}

  /** Kept by the recorder; each dump embeds those of the urls it holds. A conflicting one is warned about there. */
  pushSchema(schema: SchemaData): void {
    this.recorder.pushSchema(schema);
  }

  setUrlLoss(_url: string, _loss: number): void {}

  stop(reason: string): void {
    if (this.stopReason !== undefined) return;
    this.stopReason = reason;
    this.resolveStopped(reason);
  }

  log(message: string): void {
    this.logLine(message);
  }
}
