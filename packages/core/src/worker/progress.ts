/**
 * Frames and payload bytes the worker has finished with (written or dropped), in shared memory so the producer sees
 * the queue shrink while it is still running: a burst pushed in one synchronous loop is then limited by how far the
 * worker really is behind (VLink's queue drains concurrently too), not by when the next ack gets through. Totals are
 * 64-bit so a long recording cannot wrap; the worker adds once per batch.
 */
export class SharedProgress {
  private readonly cells: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new BigInt64Array(buffer);
  }

  /** Undefined where shared memory is unavailable (browsers without cross-origin isolation): acks alone count. */
  static create(): SharedProgress | undefined {
    if (typeof SharedArrayBuffer !== 'function' || typeof Atomics !== 'object') return undefined;
    try {
      return new SharedProgress(new SharedArrayBuffer(16));
    } catch {
      return undefined;
    }
  }

  add(frames: number, bytes: number): void {
    Atomics.add(this.cells, 0, BigInt(frames));
    Atomics.add(this.cells, 1, BigInt(bytes));
  }

  frames(): number {
    return Number(Atomics.load(this.cells, 0));
  }

  bytes(): number {
    return Number(Atomics.load(this.cells, 1));
  }
}
