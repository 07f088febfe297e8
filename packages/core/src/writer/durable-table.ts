import type { BagError } from '../errors.js';
import type { Durable } from './engine.js';

/**
 * The `pushDurable()` promises an async writer holds until the worker says their frame is committed (or lost). A
 * batch carries only the ids; the promise and the timestamp it resolves with stay on the producer's thread.
 */
export class DurableTable {
  private readonly entries = new Map<number, { durable: Durable; timestamp: number }>();
  private nextId = 0;

  /** Holds `durable` for a frame of `timestamp`; returns the id its batch carries. */
  hold(durable: Durable, timestamp: number): number {
    const id = ++this.nextId;
    this.entries.set(id, { durable, timestamp });
    return id;
  }

  /** Resolves (or with `error` rejects) the promise of `id`; unknown ids are ignored (settled already). */
  settle(id: number, error?: BagError): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    if (error) entry.durable.reject(error);
    else entry.durable.resolve(entry.timestamp);
  }

  /** The worker is gone: every promise still held rejects with `error`. */
  failAll(error: BagError): void {
    for (const id of [...this.entries.keys()]) this.settle(id, error);
  }
}
