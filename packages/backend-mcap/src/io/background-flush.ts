import { closeSync, fdatasync, openSync } from 'node:fs';

/** `fs.fdatasync`'s shape: the tests pass one that holds or fails its flushes. */
export type Datasync = (fd: number, done: (error: Error | null) => void) => void;

/** How many bytes a file collects before a flush of them starts behind the writer (16 MiB; see `BackgroundFlush`). */
export const BACKGROUND_FLUSH_BYTES = 16 * 1024 * 1024;

/**
 * Starts writing a file's dirty pages to the disk while the writer goes on, so the fsync at close (or at a commit)
 * finds most of them already there. Without it the kernel keeps them in the page cache (its own writeback starts
 * only after seconds), and the fsync at close waited for the whole file: on the benchmark's 2-core VM, 96 MiB of zstd
 * chunks (192 × 1 MiB frames) took 41–49 ms to fsync at close, a fifth of the recording's 210–220 ms.
 *
 * Every `BACKGROUND_FLUSH_BYTES` written, an asynchronous `fdatasync` (on the runtime's I/O thread pool, never on the
 * writer's thread) starts on a second descriptor of the same file. A second descriptor, opened with the first,
 * because a flush may still be queued when the writer closes its own: flushing the file's original descriptor then
 * could reach whatever file reused its number. This one is closed when its last flush has returned. Flushes are not
 * waited for before the next starts: a writer looping without yielding (`syncMode` fed by a loop) would never see one
 * return, and would flush once. Queued ones wait for the pool's threads; each after the first finds less to write.
 * Measured (Node 20, 192 × 1 MiB zstd frames, 11 runs, medians): 212–216 ms without, 187–196 ms with one every 16
 * MiB (8 MiB: the same; 32 MiB: 211–215 ms; one at a time: 212–216 ms, as without).
 *
 * Nothing depends on these flushes for durability: `sync()` still fsyncs. They change only when the bytes reach the
 * disk. A flush that fails is kept and thrown by the next `sync()` (the failed pages may be lost, so the fsync that
 * promises durability must not pass, even where the kernel reports the error to one descriptor only).
 */
export class BackgroundFlush {
  private fd: number;
  private unflushed = 0;
  private running = 0;
  private closed = false;
  private failure: Error | undefined;

  constructor(
    path: string,
    private readonly datasync: Datasync = fdatasync,
  ) {
    // 'r+': fsync of a read-only descriptor is refused on some systems (Windows' FlushFileBuffers needs write access).
    this.fd = openSync(path, 'r+');
  }

  /** Count `bytes` more written; starts a flush when enough have collected since the last one. */
  wrote(bytes: number): void {
    this.unflushed += bytes;
    if (this.unflushed < BACKGROUND_FLUSH_BYTES || this.closed) return;
    this.unflushed = 0;
    this.running++;
    this.datasync(this.fd, (error) => {
      this.running--;
      if (error && !this.failure) this.failure = error;
      if (this.closed && this.running === 0) this.release();
    });
  }

  /** The error of a flush that failed since the last call, once. */
  takeFailure(): Error | undefined {
    const failure = this.failure;
    this.failure = undefined;
    return failure;
  }

  /** No flush starts after this; the descriptor is closed now, or when the last running flush returns. */
  close(): void {
    this.closed = true;
    if (this.running === 0) this.release();
  }

  private release(): void {
    if (this.fd < 0) return;
    const fd = this.fd;
    this.fd = -1;
    try {
      closeSync(fd);
    } catch {
      // Nothing was written through it: the writer's own descriptor reports the file's errors.
    }
  }
}
