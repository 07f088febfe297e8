import type { Frame } from '@vlink/bag';
import type { Lease } from '../store/bag-store.js';
import { FrameEncoder } from '@vlink/bag-decode';
import type { MessageJsonWriter } from './frame-json.js';
import type { QueryCursor } from './query-cursor.js';

/** Bytes handed to the transport per chunk: big enough to amortise per-chunk costs, small enough to stay responsive. */
const CHUNK_BYTES = 64 * 1024;
/** Bytes the stream may queue before `pull` stops being called (the backpressure bound). */
const HIGH_WATER_BYTES = 1024 * 1024;

export interface FrameStreamOptions {
  lease: Lease;
  cursor: QueryCursor;
  /** Stop after this many frames; undefined = the whole range. */
  limit?: number;
  /**
   * Bytes read ahead of the consumer (default HIGH_WATER_BYTES). The pool's workers use 0: they read only while a
   * pull job runs, so a worker does nothing between jobs and a read that hangs is the running job's.
   */
  highWaterBytes?: number;
}

type Controller = ReadableStreamDefaultController<Uint8Array>;

/** Turns frames into chunks. `add` returns true once it enqueued a chunk, which ends the current `pull`. */
interface ChunkWriter {
  add(frame: Frame, controller: Controller): boolean;
  /** Enqueues what is pending (at the end, and before a failure is reported). */
  finish(controller: Controller): void;
}

/**
 * A pull-driven stream over a query: frames are read only when the consumer (the socket) has room, so memory stays
 * bounded by about HIGH_WATER_BYTES whatever the range. The lease is returned on end, error and cancel.
 *
 * A read that fails errors the stream with the BagError, but only once the consumer has taken every chunk enqueued
 * before it (erroring a stream discards its queue), so nothing read before the failure is lost; what the client then
 * sees (an NDJSON error line, an aborted connection) is the route's decision (`loud-stream.ts`).
 */
function frameStream(options: FrameStreamOptions, writer: ChunkWriter): ReadableStream<Uint8Array> {
  const { lease, cursor, limit } = options;
  const highWater = options.highWaterBytes ?? HIGH_WATER_BYTES;
  let sent = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  const end = async () => {
    if (ended) return;
    ended = true;
    try {
      await cursor.close();
    } finally {
      lease.release();
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (failure) {
          // Called again on every read; the queue is empty once the consumer has taken the last chunk.
          if ((controller.desiredSize ?? 0) >= highWater) controller.error(failure.error);
          return;
        }
        try {
          for (;;) {
            if (limit !== undefined && sent >= limit) break;
            const frame = await cursor.next();
            if (!frame) break;
            sent++;
            if (writer.add(frame, controller)) return;
          }
          writer.finish(controller);
          await end();
          controller.close();
        } catch (error) {
          await end().catch(() => undefined);
          writer.finish(controller);
          failure = { error };
          if ((controller.desiredSize ?? 0) >= highWater) controller.error(error);
        }
      },
      cancel: end,
    },
    { highWaterMark: highWater, size: (chunk) => chunk.byteLength },
  );
}

/** `format=ndjson`: one JSON object per line. */
export function ndjsonStream(options: FrameStreamOptions, json: MessageJsonWriter): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let parts: string[] = [];
  let length = 0;
  const emit = (controller: Controller) => {
    if (parts.length === 0) return;
    controller.enqueue(encoder.encode(parts.join('')));
    parts = [];
    length = 0;
  };
  return frameStream(options, {
    add(frame, controller) {
      const line = `${json.text(frame)}\n`;
      parts.push(line);
      length += line.length;
      if (length < CHUNK_BYTES) return false;
      emit(controller);
      return true;
    },
    finish: emit,
  });
}

/** `format=binary`: frames back to back in the layout of `@vlink/bag-decode`'s `binary-frame.ts`. */
export function binaryStream(options: FrameStreamOptions): ReadableStream<Uint8Array> {
  const encoder = new FrameEncoder();
  let chunk = new Uint8Array(CHUNK_BYTES);
  let view = new DataView(chunk.buffer);
  let used = 0;
  const emit = (controller: Controller) => {
    if (used === 0) return;
    controller.enqueue(chunk.subarray(0, used));
    chunk = new Uint8Array(CHUNK_BYTES);
    view = new DataView(chunk.buffer);
    used = 0;
  };
  return frameStream(options, {
    add(frame, controller) {
      const size = encoder.sizeOf(frame);
      if (size > CHUNK_BYTES - used) {
        emit(controller);
        if (size > CHUNK_BYTES) {
          // A big frame travels alone, in one copy (the reader's view is only valid until the next read).
          controller.enqueue(encoder.encode(frame));
          return true;
        }
        used = encoder.writeInto(frame, chunk, view, 0);
        return true;
      }
      used = encoder.writeInto(frame, chunk, view, used);
      if (used < CHUNK_BYTES) return false;
      emit(controller);
      return true;
    },
    finish: emit,
  });
}
