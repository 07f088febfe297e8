import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import type { BagWriter } from './bag-writer.js';

/** Node-style emitter: `on(event, listener)` and `off`/`removeListener`. */
export interface EmitterLike {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  off?(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener?(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Anything `tapSource` can record: an EventTarget, an EventEmitter, or an async iterable of messages. */
export type TapSource = EventTarget | EmitterLike | AsyncIterable<unknown>;

export interface TapOptions<M = unknown> {
  /** The url to record under, or a function of the message (e.g. a topic field). */
  url: string | ((message: M) => string);
  serType?: string;
  schemaType?: SchemaType;
  actionType?: ActionType;
  /** Event name for emitters and event targets (default `'message'`); ignored for async iterables. */
  event?: string;
  /**
   * Payload of a message. Default: a `Uint8Array` as is, an `ArrayBuffer`/view as bytes, a string as UTF-8, anything
   * else as JSON. For an EventTarget the message is `event.data` (MessageEvent) or `event.detail` (CustomEvent).
   */
  toBytes?: (message: M) => Uint8Array;
  /** Frame timestamp in µs since the recording start; default: the writer's clock. */
  timestamp?: (message: M) => number;
}

/** Stops recording; `done` settles when an async iterable's loop has ended (at once for the other sources). */
export interface TapDisposer {
  (): void;
  [Symbol.dispose](): void;
  readonly done: Promise<void>;
}

/**
 * Records every message of a source into `writer` (the TypeScript counterpart of VLink's `set_record_path`): each
 * message becomes one `push` with the given url, ser and family. Returns a disposer that detaches the tap. Messages
 * the writer refuses are counted in `writer.stats().dropped`; a message that cannot be converted is reported through
 * the writer's error callbacks (and its `'error'` event) and skipped.
 */
export function tapSource<M = unknown>(writer: BagWriter, source: TapSource, options: TapOptions<M>): TapDisposer {
  const encode = options.toBytes ?? (defaultBytes as (message: M) => Uint8Array);
  const serType = options.serType ?? '';
  const schemaType = options.schemaType ?? SchemaType.Unknown;
  const actionType = options.actionType ?? ActionType.Publish;
  const event = options.event ?? 'message';
  const record = (message: M) => {
    let frame: Frame;
    try {
      const url = typeof options.url === 'function' ? options.url(message) : options.url;
      const timestamp = options.timestamp ? options.timestamp(message) : -1;
      frame = { timestamp, url, data: encode(message), serType, schemaType, actionType };
    } catch (error) {
      writer.reportError(BagError.wrap(error, 'INVALID_ARGUMENT', 'tapSource could not convert a message'));
      return;
    }
    writer.push(frame);
  };

  if (isEventTarget(source)) {
    const listener = (e: Event) => record(eventPayload(e) as M);
    source.addEventListener(event, listener);
    return disposer(() => source.removeEventListener(event, listener), Promise.resolve());
  }
  if (isEmitter(source)) {
    const listener = (message: unknown) => record(message as M);
    source.on(event, listener);
    const off = () => (source.off ? source.off(event, listener) : source.removeListener?.(event, listener));
    return disposer(off, Promise.resolve());
  }
  if (isAsyncIterable(source)) {
    const iterator = source[Symbol.asyncIterator]();
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const next = await iterator.next();
        if (next.done || stopped) break;
        record(next.value as M);
      }
    })().catch((error) => writer.reportError(BagError.wrap(error, 'IO_ERROR', 'tapSource: the async iterable failed')));
    return disposer(() => {
      stopped = true;
      // Ends a pending next() for generators and streams that support return(); others end at their next message.
      void Promise.resolve(iterator.return?.()).catch(() => {});
    }, loop);
  }
  throw new BagError('INVALID_ARGUMENT', 'tapSource needs an EventTarget, an EventEmitter or an async iterable');
}

function disposer(stop: () => void, done: Promise<void>): TapDisposer {
  let active = true;
  const dispose = () => {
    if (!active) return;
    active = false;
    stop();
  };
  return Object.assign(dispose, { [Symbol.dispose]: dispose, done });
}

function isEventTarget(value: unknown): value is EventTarget {
  return (
    typeof (value as EventTarget)?.addEventListener === 'function' &&
    typeof (value as EventTarget).removeEventListener === 'function'
  );
}

function isEmitter(value: unknown): value is EmitterLike {
  return typeof (value as EmitterLike)?.on === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === 'function';
}

function eventPayload(event: Event): unknown {
  if ('data' in event) return (event as MessageEvent).data;
  if ('detail' in event) return (event as CustomEvent).detail;
  return event;
}

const utf8 = new TextEncoder();

function defaultBytes(message: unknown): Uint8Array {
  if (message instanceof Uint8Array) return message;
  if (message instanceof ArrayBuffer) return new Uint8Array(message);
  if (ArrayBuffer.isView(message)) return new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
  if (typeof message === 'string') return utf8.encode(message);
  const json = JSON.stringify(message);
  if (json === undefined) throw new BagError('INVALID_ARGUMENT', `cannot record a ${typeof message} message`);
  return utf8.encode(json);
}
