/**
 * Frames and payload bytes the worker has finished with (written or dropped), in shared memory so the producer sees
 * the queue shrink while it is still running: a burst pushed in one synchronous loop is then limited by how far the
 * worker really is behind (VLink's queue drains concurrently too), not by when the next ack gets through. Totals are
 * 64-bit so a long recording cannot wrap; the worker adds once per batch. The third cell is the last finished
 * batch's sequence number: the producer reuses its slabs without waiting for the ack.
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
      return new SharedProgress(new SharedArrayBuffer(24));
    } catch {
      return undefined;
    }
  }

  /** `seq`: the batch just finished (batches finish in order), whose slabs the producer may then reuse. */
  add(frames: number, bytes: number, seq?: number): void {
    Atomics.add(this.cells, 0, BigInt(frames));
    Atomics.add(this.cells, 1, BigInt(bytes));
    if (seq !== undefined) Atomics.store(this.cells, 2, BigInt(seq));
  }

  /** The last batch the worker finished with. */
  batches(): number {
    return Number(Atomics.load(this.cells, 2));
  }

  frames(): number {
    return Number(Atomics.load(this.cells, 0));
  }

  bytes(): number {
    return Number(Atomics.load(this.cells, 1));
  }
}
