import { once } from 'node:events';

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

  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  /** Flushes and resolves once the stream has taken every byte (before the process exits). */
  async end(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => this.stream.write('', () => resolve()));
  }
}
