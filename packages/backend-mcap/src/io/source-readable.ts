import type { ByteSource } from '@vlink/bag-core';
import type { Readable } from './readable.js';

/** Core's `ByteSource` (a bag behind a url, e.g. on S3) as the MCAP reader's `Readable`. */
export class SourceReadable implements Readable {
  constructor(private readonly source: ByteSource) {}
  size(): number {
    return this.source.size();
  }
  read(offset: number, length: number, target?: Uint8Array): Uint8Array {
    const bytes = this.source.read(offset, length);
    if (!target) return bytes;
    target.set(bytes);
    return target.subarray(0, length);
  }
  close(): void {
    this.source.close();
  }
}
