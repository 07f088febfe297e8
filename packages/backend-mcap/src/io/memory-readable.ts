import { BagError } from '@vlink/bag-core';
import type { Readable } from './readable.js';

/** A readable over bytes in memory (tests, and files already loaded). Reads without a target are views, not copies. */
export class MemoryReadable implements Readable {
  constructor(
    private readonly bytes: Uint8Array,
    private readonly name = '(memory)',
  ) {}
  size(): number {
    return this.bytes.length;
  }
  read(offset: number, length: number, target?: Uint8Array): Uint8Array {
    if (!(offset >= 0 && length >= 0 && offset + length <= this.bytes.length)) {
      throw new BagError('CORRUPT_FILE', `read of ${length} bytes past the end (${this.bytes.length})`, {
        file: this.name,
        offset,
      });
    }
    const view = this.bytes.subarray(offset, offset + length);
    if (!target) return view;
    target.set(view);
    return target.subarray(0, length);
  }
  close(): void {}
}
