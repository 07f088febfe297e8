import type { Writable } from './writable.js';

/** A writable that collects bytes in memory (tests, and building files before they go elsewhere). */
export class MemoryWritable implements Writable {
  private buf = new Uint8Array(1024);
  private len = 0;

  position(): number {
    return this.len;
  }
  write(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }
  writev(chunks: readonly Uint8Array[]): void {
    for (const c of chunks) this.write(c);
  }
  writeAt(bytes: Uint8Array, position: number): void {
    if (position < 0 || position + bytes.length > this.len) throw new RangeError('writeAt outside the written bytes');
    this.buf.set(bytes, position);
  }
  flush(): void {}
  sync(): void {}
  close(): void {}
  /** A copy of everything written. */
  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
  private reserve(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}
