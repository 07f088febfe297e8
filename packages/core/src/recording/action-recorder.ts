import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import { companionMetaFrame } from '../model/companion-meta.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { readClock, type FrameSink, type RecordingClock } from './frame-sink.js';

/** How a submit ended: every part applied, some parts applied, nothing applied. */
export type SubmitResult = 'full' | 'partial' | 'failed';

/** The counter causes (format reference §2.13) a partial and a failed submit add on the action url. */
export const SUBMIT_CAUSE = { partial: 'submitPartial', failed: 'submitFailed' } as const;

export interface ActionRecorderOptions {
  sink: FrameSink;
  /** The url the actions are recorded on (their companion metadata on `<url>/meta`). */
  url: string;
  /** The recording clock (µs since start): `() => writer.nowUs()` live, a fake one in tests. */
  clock: RecordingClock;
  serType?: string;
  schemaType?: SchemaType;
  /** Default `Publish`. */
  actionType?: ActionType;
}

/** A submit in flight: when it started. */
export interface SubmitStamp {
  readonly startUs: number;
}

/** What `finish`/`submit` recorded. `timestamp` is −1 when the sink refused the frame (it counted why). */
export interface ActionRecord {
  startUs: number;
  endUs: number;
  result: SubmitResult;
  timestamp: number;
}

/**
 * Records actions (commands a controller submits) with their submit's start, end and result. The action frame has
 * publish time = the submit's start (when the command was issued) and log time = its end (when its result was known
 * and it was recorded); the companion metadata (`<url>/meta`) carries `submit: { startUs, endUs, result, detail }`; a
 * partial or failed submit is also counted on the url (`submitPartial`, `submitFailed`). Every time comes from the
 * injected clock.
 */
export class ActionRecorder {
  private readonly options: ActionRecorderOptions;
  private readonly results: Record<SubmitResult | 'refused', number> = { full: 0, partial: 0, failed: 0, refused: 0 };

  constructor(options: ActionRecorderOptions) {
    if (typeof options.url !== 'string' || options.url.length === 0)
      throw new BagError('INVALID_ARGUMENT', 'ActionRecorder: url must be a non-empty string');
    this.options = options;
  }

  /** Stamps the start of a submit; pass the stamp to `finish` once its result is known. */
  begin(): SubmitStamp {
    return { startUs: readClock(this.options.clock, 'ActionRecorder.begin') };
  }

  /** Stamps the end of the submit begun at `stamp` and records the action `data` with its result. */
  finish(stamp: SubmitStamp, data: Uint8Array, result: SubmitResult, detail?: string): ActionRecord {
    if (result !== 'full' && result !== 'partial' && result !== 'failed')
      throw new BagError('INVALID_ARGUMENT', `ActionRecorder: result must be full, partial or failed, got ${result}`, {
        url: this.options.url,
      });
    const endUs = readClock(this.options.clock, 'ActionRecorder.finish');
    const { url, sink } = this.options;
    const frame: Frame = {
      timestamp: Math.max(endUs, stamp.startUs),
      publishTime: stamp.startUs,
      url,
      data,
      serType: this.options.serType ?? '',
      schemaType: this.options.schemaType ?? SchemaType.Unknown,
      actionType: this.options.actionType ?? ActionType.Publish,
    };
    const timestamp = sink.push(frame);
    if (result !== 'full') sink.count(url, SUBMIT_CAUSE[result], 1);
    if (timestamp < 0) {
      this.results.refused++;
    } else {
      this.results[result]++;
      const submit = { startUs: stamp.startUs, endUs: frame.timestamp, result, ...(detail ? { detail } : {}) };
      sink.push(companionMetaFrame({ ...frame, timestamp }, { submit }));
    }
    return { startUs: stamp.startUs, endUs: frame.timestamp, result, timestamp };
  }

  /**
   * Runs `run` as the submit of `data`: stamps its start, awaits it and records the action with the result it
   * returns (`full` when it returns nothing). When it throws, the action is recorded as `failed` (the error's message
   * as detail) and the error is thrown on.
   */
  async submit(data: Uint8Array, run: () => SubmitResult | undefined | Promise<SubmitResult | undefined>) {
    const stamp = this.begin();
    let result: SubmitResult | undefined;
    try {
      result = await run();
    } catch (error) {
      this.finish(stamp, data, 'failed', error instanceof Error ? error.message : String(error));
      throw error;
    }
    return this.finish(stamp, data, result ?? 'full');
  }

  /** Submits recorded so far, by result; `refused` counts frames the sink refused. */
  stats(): Record<SubmitResult | 'refused', number> {
    return { ...this.results };
  }
}
