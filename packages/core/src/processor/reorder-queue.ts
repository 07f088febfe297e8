import type { Frame } from '../model/frame.js';

/** One queued frame: its data-plane key and what the release needs. */
export interface QueueEntry {
  frame: Frame;
  /** Resolved data timestamp (µs); −1 while invalid. */
  dataTs: number;
  /** False for frames pushed with a negative data timestamp before any valid one (format reference §8 step 2). */
  valid: boolean;
  /** `dataTs` when valid, else `frame.timestamp`: what the window rule and the order use. */
  key: number;
  bytes: number;
  /** `performance.now()` at push, for the optional wall-clock drain. */
  enqueuedAt: number;
}

/**
 * Entries kept sorted: every invalid entry before every valid one, each group by key, equal keys in push order
 * (stable). Insertion is a binary search; frames mostly arrive nearly in order, so the splice is short. Releasing
 * takes from a moving head instead of shifting the array.
 */
export class ReorderQueue {
  private items: QueueEntry[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  get oldest(): QueueEntry | undefined {
    return this.items[this.head];
  }

  get newest(): QueueEntry | undefined {
    return this.size > 0 ? this.items[this.items.length - 1] : undefined;
  }

  insert(entry: QueueEntry): void {
    // Upper bound: the first index whose entry sorts strictly after `entry`.
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (after(this.items[mid]!, entry)) hi = mid;
      else lo = mid + 1;
    }
    if (lo === this.items.length) this.items.push(entry);
    else this.items.splice(lo, 0, entry);
  }

  shift(): QueueEntry | undefined {
    if (this.size === 0) return undefined;
    const entry = this.items[this.head]!;
    this.items[this.head++] = undefined as unknown as QueueEntry;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return entry;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/** True when `a` sorts strictly after `b`. */
function after(a: QueueEntry, b: QueueEntry): boolean {
  if (a.valid !== b.valid) return a.valid;
  return a.key > b.key;
}
