import type { Frame } from '../model/frame.js';
import { BagPluginInterface } from '../plugins/bag-plugin.js';
import { BagProcessor } from './bag-processor.js';
import type { ProcessorConfig } from './processor-config.js';
import { checkCallback } from '../util/callback-check.js';

/** Picks a frame's data-plane timestamp (µs), e.g. a header stamp decoded from the payload; negative = unknown. */
export type DataTimestampFn = (frame: Frame) => number;

/**
 * A `BagProcessor` as a bag plugin, so it can be bound to a writer (`BagWriter.bindPluginInterface`: frames are
 * stored in data time) or to a reader (playback emits in data time). `onReset` discards, `flush` releases everything
 * (a writer flushes at close, a reader after each pass).
 *
 * Plugin hosts call `onWrite`/`onRead` synchronously and cannot wait, so when the cache is full the oldest frames
 * are released at once instead of blocking the producer (VLink blocks the producer thread until the worker made
 * room; the frames released are the same).
 */
export class BagProcessorPlugin extends BagPluginInterface {
  readonly processor: BagProcessor;

  constructor(
    private readonly dataTimestamp: DataTimestampFn,
    config: Partial<ProcessorConfig> = {},
  ) {
    super();
    checkCallback('the data timestamp function', dataTimestamp, false);
    this.processor = new BagProcessor(config);
    this.processor.registerOutputCallback((frame) => this.doCallback(frame));
  }

  override onWrite(frame: Frame): void {
    this.feed(frame);
  }

  override onRead(frame: Frame): void {
    this.feed(frame);
  }

  override onReset(): void {
    this.processor.reset();
  }

  override flush(): void {
    this.processor.flush();
  }

  private feed(frame: Frame): void {
    if (!this.processor.push(this.dataTimestamp(frame), frame)) this.processor.releaseOverflow();
  }
}
