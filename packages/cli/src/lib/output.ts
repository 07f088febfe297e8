import { once } from 'node:events';
import type { Frame } from '@vlink/bag';
import { FrameEncoder } from '@vlink/bag-decode/frames';

let epipeInstalled = false;

/**
 * Makes a closed stdout (`vlink-bag cat x.vdb | head`) end the process quietly with exit code 0 instead of an
 * EPIPE stack trace.
 */
export function exitQuietlyOnEpipe(): void {
  if (epipeInstalled) return;
  epipeInstalled = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    throw error;
  });
}

/**
 * Buffers text for stdout and writes it in 64 KiB slices, waiting for `drain` when the pipe is full, so a fast
 * reader never piles a whole bag up in memory and a slow consumer paces the reader.
 */
export class LineOutput {
  private parts: string[] = [];
  private size = 0;
  /** Set while the stream is full: what a writer waits for. */
  protected draining: Promise<void> | undefined;

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stdout,
    private readonly sliceBytes = 64 * 1024,
  ) {}

  /** Queues text; returns a promise only when the caller should wait (the buffer was handed to a full pipe). */
  write(text: string): Promise<void> | undefined {
    this.parts.push(text);
    this.size += text.length;
    if (this.size < this.sliceBytes) return undefined;
    return this.flush();
  }

  /** Hands what is queued to the stream; resolves once the stream can take more. */
  flush(): Promise<void> {
    if (this.parts.length > 0) {
      const text = this.parts.join('');
      this.parts = [];
      this.size = 0;
      if (!this.stream.write(text) && !this.draining)
        this.draining = once(this.stream, 'drain').then(() => {
          this.draining = undefined;
        });
    }
    return this.draining ?? Promise.resolve();
  }

  /** Flushes and resolves once the stream has taken every byte (before the process exits). */
  async end(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
  }
}

/**
 * Text for stdout in real time (`play --stdout`): a line goes out when the event loop turns after it was queued, so a
 * reader of the pipe sees each frame at its replay time, and the frames due together (a burst, or a replay as fast as
 * possible) leave in one write of up to 64 KiB. A full pipe makes `write` return the promise to wait for, so a slow
 * consumer paces the replay instead of piling lines up in memory.
 */
export class PacedLineOutput extends LineOutput {
  private scheduled = false;

  override write(text: string): Promise<void> | undefined {
    const full = super.write(text);
    if (full) return full;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        void this.flush();
      });
    }
    return this.draining;
  }
}

/**
 * Writes frames to stdout in the server's binary frame layout (`GET …/messages?format=binary`, `FrameEncoder` of
 * `@vlink/bag-decode`), gathered into slices: each frame is encoded straight into the slice (no string, no base64),
 * and a slice handed to the stream is never written into again, since a stream may hold it until the bytes are out.
 */
export class FrameOutput {
  private readonly encoder = new FrameEncoder();
  private slice: Uint8Array;
  private view: DataView;
  private used = 0;

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stdout,
    private readonly sliceBytes = 1024 * 1024,
  ) {
    this.slice = new Uint8Array(sliceBytes);
    this.view = new DataView(this.slice.buffer);
  }

  /** Queues a frame (copied now: its data is valid only until the reader's next frame); a promise when to wait. */
  write(frame: Frame): Promise<void> | undefined {
    const size = this.encoder.sizeOf(frame);
    if (size <= this.sliceBytes - this.used) {
      this.used = this.encoder.writeInto(frame, this.slice, this.view, this.used);
      return undefined;
    }
    const pending = this.flush();
    // A frame bigger than a slice goes out alone, in one buffer of its own.
    if (size > this.sliceBytes) return this.send(this.encoder.encode(frame)) ?? pending;
    this.used = this.encoder.writeInto(frame, this.slice, this.view, 0);
    return pending;
  }

  /** Hands the slice to the stream and starts a new one. */
  flush(): Promise<void> | undefined {
    if (this.used === 0) return undefined;
    const full = this.slice.subarray(0, this.used);
    this.slice = new Uint8Array(this.sliceBytes);
    this.view = new DataView(this.slice.buffer);
    this.used = 0;
    return this.send(full);
  }

  /** Flushes and resolves once the stream has taken every byte (before the process exits). */
  async end(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => this.stream.write(new Uint8Array(0), () => resolve()));
  }

  private send(bytes: Uint8Array): Promise<void> | undefined {
    if (this.stream.write(bytes)) return undefined;
    return once(this.stream, 'drain').then(() => undefined);
  }
}

/** Prints `warnings` on stderr as `vlink-bag <verb>: <file>: warning: …` unless quiet. */
export function printWarnings(
  verb: string,
  file: string,
  warnings: readonly string[],
  quiet: boolean | undefined,
): void {
  if (quiet) return;
  for (const warning of warnings) process.stderr.write(`vlink-bag ${verb}: ${file}: warning: ${warning}\n`);
}
