import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import type { Readable } from './readable.js';

/**
 * A readable over a file descriptor with `readSync` (node:fs works on Node, Bun and Deno). The size is taken once at
 * open: a file that grows later is read as it was, one that shrinks fails with `CORRUPT_FILE` instead of hanging.
 */
export class FileReadable implements Readable {
  private fd: number;
  private readonly bytes: number;

  constructor(readonly path: string) {
    // Before open(): opening a FIFO for reading blocks until a writer appears, forever for a planted one.
    assertRegularFile(path);
    try {
      this.fd = openSync(path, 'r');
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOENT') throw new BagError('NOT_FOUND', 'no such bag', { file: path, cause: error });
      throw BagError.wrap(error, 'IO_ERROR', 'cannot open bag', { file: path });
    }
    try {
      const stat = fstatSync(this.fd);
      if (!stat.isFile()) throw new BagError('INVALID_ARGUMENT', 'not a regular file: refused', { file: path });
      this.bytes = stat.size;
    } catch (error) {
      closeSync(this.fd);
      throw BagError.wrap(error, 'IO_ERROR', 'cannot stat bag', { file: path });
    }
  }

  size(): number {
    return this.bytes;
  }

  read(offset: number, length: number, target?: Uint8Array): Uint8Array {
    if (this.fd < 0) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
    if (!(offset >= 0 && length >= 0 && offset + length <= this.bytes)) {
      throw new BagError('CORRUPT_FILE', `read of ${length} bytes past the end (${this.bytes})`, {
        file: this.path,
        offset,
      });
    }
    const out = target ? target.subarray(0, length) : new Uint8Array(length);
    let done = 0;
    while (done < length) {
      let n: number;
      try {
        n = readSync(this.fd, out, done, length - done, offset + done);
      } catch (error) {
        throw BagError.wrap(error, 'IO_ERROR', 'read failed', { file: this.path, offset: offset + done });
      }
      if (n <= 0)
        throw new BagError('CORRUPT_FILE', 'file is shorter than when it was opened', {
          file: this.path,
          offset: offset + done,
        });
      done += n;
    }
    return out;
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
    }
  }
}

/** Missing → `NOT_FOUND`; a directory, FIFO, device or socket → `INVALID_ARGUMENT` (see the constructor). */
function assertRegularFile(path: string): void {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') throw new BagError('NOT_FOUND', 'no such bag', { file: path, cause: error });
    throw BagError.wrap(error, 'IO_ERROR', 'cannot open bag', { file: path });
  }
  if (stat.isDirectory()) throw new BagError('INVALID_ARGUMENT', 'is a directory', { file: path });
  if (!stat.isFile()) {
    const kind = stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device';
    throw new BagError('INVALID_ARGUMENT', `is ${kind}, not a regular file: refused`, { file: path });
  }
}
