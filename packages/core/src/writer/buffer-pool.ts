/**
 * Recycles the buffers batches travel in. The worker hands every buffer of a written batch back with its ack, so a
 * steady recording reuses warm memory instead of allocating (and page-faulting, and garbage-collecting) a fresh
 * arena or payload copy per batch; that is most of what keeps `push()` p99 flat. Buffers are pooled by capacity,
 * which `capacityFor` rounds to eighths of a power of two (≤ 12.5 % slack); the pool holds at most `maxBytes`.
 */
export class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** A buffer of exactly `capacity` bytes (a value from `capacityFor`), recycled when one is free. */
  take(capacity: number): ArrayBuffer {
    const buffer = this.free.get(capacity)?.pop();
    if (!buffer) return new ArrayBuffer(capacity);
    this.bytes -= capacity;
    return buffer;
  }

  /** Takes back a buffer; odd sizes (a caller's transferred buffer), detached ones and any excess are left to GC. */
  give(buffer: ArrayBuffer): void {
    const size = buffer.byteLength;
    if (size === 0 || capacityFor(size) !== size || this.bytes + size > this.maxBytes) return;
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(buffer);
    this.bytes += size;
  }
}

const MIN_CAPACITY = 4096;

/** Smallest pooled capacity ≥ `length`: 4 KiB, or the next eighth-of-a-power-of-two step above it. */
export function capacityFor(length: number): number {
  if (length <= MIN_CAPACITY) return MIN_CAPACITY;
  const step = 2 ** (Math.floor(Math.log2(length - 1)) - 3);
  return Math.ceil(length / step) * step;
}
