import type { Writable } from '../io/writable.js';
import { ByteWriter } from '../mcap/byte-writer.js';

/** Buffers small records so a file of loose messages is not written one syscall per record. */
export class BufferedSink {
  private readonly pending = new ByteWriter(1024 * 1024);
  constructor(private readonly out: Writable) {}
  position(): number {
    return this.out.position() + this.pending.length;
  }
  write(bytes: Uint8Array): void {
    if (bytes.length >= 256 * 1024) {
      this.flush();
      this.out.write(bytes);
      return;
    }
    this.pending.raw(bytes);
    if (this.pending.length >= 1024 * 1024) this.flush();
  }
  flush(): void {
    if (this.pending.length === 0) return;
    this.out.write(this.pending.view8());
    this.pending.reset();
  }
}
