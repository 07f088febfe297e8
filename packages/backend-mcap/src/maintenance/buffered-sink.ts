import type { Writable } from '../io/writable.js';
import { ByteWriter } from '../mcap/byte-writer.js';
import { crc32Append } from '../mcap/crc32.js';

/**
 * Buffers small records so a file of loose messages is not written one syscall per record, and keeps the CRC of
 * every byte written (a rebuilt file's data-section CRC).
 */
export class BufferedSink {
  private readonly pending = new ByteWriter(1024 * 1024);
  private written = 0;
  constructor(private readonly out: Writable) {}

  /** CRC-32 of every byte written so far, pending ones included. */
  crc(): number {
    return crc32Append(this.written, this.pending.view8());
  }
  position(): number {
    return this.out.position() + this.pending.length;
  }
  write(bytes: Uint8Array): void {
    if (bytes.length >= 256 * 1024) {
      this.flush();
      this.written = crc32Append(this.written, bytes);
      this.out.write(bytes);
      return;
    }
    this.pending.raw(bytes);
    if (this.pending.length >= 1024 * 1024) this.flush();
  }
  flush(): void {
    if (this.pending.length === 0) return;
    this.written = crc32Append(this.written, this.pending.view8());
    this.out.write(this.pending.view8());
    this.pending.reset();
  }
}
