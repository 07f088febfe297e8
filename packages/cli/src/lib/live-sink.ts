import type { BagWriterOptions, Frame, SchemaData } from '@vlink/bag';

/**
 * Where a live source (stdin NDJSON, a Foxglove WebSocket, rosbridge) delivers frames: a recording
 * (`RecordSession`) or the trigger daemon's ring (`TriggerSink`). The source opens the sink with what it learnt
 * (a recording start, a tag), writes frames (awaiting `ready()` while `mustWait`), and ends on `stopped`.
 */
export interface LiveSink {
  readonly stopped: Promise<string>;
  readonly isOpen: boolean;
  readonly isStopping: boolean;
  readonly mustWait: boolean;
  open(overrides?: Partial<BagWriterOptions>): Promise<void>;
  write(frame: Frame): Promise<void>;
  ready(): Promise<void>;
  pushSchema(schema: SchemaData): void;
  setUrlLoss(url: string, loss: number): void;
  stop(reason: string): void;
  log(message: string): void;
  /** A `{"trigger":{…}}` line on stdin (trigger daemon only). */
  onTriggerLine?(params: Record<string, unknown>): void;
}
