import type { Frame } from '../model/frame.js';

/** One captured frame (a private copy) and its capture time in µs. */
export interface RingEntry {
  captureUs: number;
  frame: Frame;
}

/**
 * A url's history, oldest first, evicted by time or (under `coverOldest`) to make room. Capture times from one
 * source are non-decreasing, so expiry pops from the head; a moving head avoids shifting the array.
 */
export class TimeRing {
  private entries: RingEntry[] = [];
  private head = 0;
  bytes = 0;

  get size(): number {
    return this.entries.length - this.head;
  }

  push(entry: RingEntry): void {
    this.entries.push(entry);
    this.bytes += entry.frame.data.length;
  }

  /** Drops the oldest entry; returns its size in bytes (0 when empty). */
  dropOldest(): number {
    if (this.size === 0) return 0;
    const entry = this.entries[this.head]!;
    this.entries[this.head++] = undefined as unknown as RingEntry;
    this.bytes -= entry.frame.data.length;
    if (this.head > 256 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return entry.frame.data.length;
  }

  /** Drops entries captured before `horizonUs`; returns the bytes freed. */
  expire(horizonUs: number): number {
    let freed = 0;
    while (this.size > 0 && this.entries[this.head]!.captureUs < horizonUs) freed += this.dropOldest();
    return freed;
  }

  /** Entries with `fromUs ≤ captureUs ≤ toUs` (inclusive), in ring order. */
  window(fromUs: number, toUs: number): RingEntry[] {
    const out: RingEntry[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.captureUs >= fromUs && entry.captureUs <= toUs) out.push(entry);
    }
    return out;
  }

  clear(): void {
    this.entries = [];
    this.head = 0;
    this.bytes = 0;
  }
}
