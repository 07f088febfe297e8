import type { Frame } from '../model/frame.js';
import type { SourceQueue, SourceQueues } from './source-queues.js';

/** A `write()` waiting for room: it holds its accepted frame. */
export interface WaitingWrite {
  frame: Frame;
  resolve(timestamp: number): void;
  reject(error: unknown): void;
}

/**
 * The `write()` and `ready()` calls waiting for room, per source: a write waits while its source's queue is above its
 * high-water mark, and behind the earlier waiting writes of the same source (a source's frames keep their order),
 * never behind another source's (a camera waiting for room does not hold back state frames).
 */
export class WriteWaiters {
  private writes: Array<WaitingWrite & { source: SourceQueue }> = [];
  /** Writes waiting per source; only sources with writes waiting have an entry. */
  private readonly perSource = new Map<SourceQueue, number>();
  private readies: Array<{ url: string | undefined; resolve(): void }> = [];

  constructor(private readonly sources: SourceQueues) {}

  /**
   * Writes waiting, all sources together: the length of the list, kept in a field because `write()` reads it for
   * every frame (0 nearly always, and then nothing else of this class is asked).
   */
  count = 0;

  /** Whether a write of `url`'s source (of any source without `url`) waits already. */
  waiting(url?: string): boolean {
    if (url === undefined) return this.writes.length > 0;
    return this.writes.length > 0 && this.perSource.has(this.sources.of(url));
  }

  wait(frame: Frame): Promise<number> {
    const source = this.sources.of(frame.url);
    this.perSource.set(source, (this.perSource.get(source) ?? 0) + 1);
    return new Promise((resolve, reject) => (this.count = this.writes.push({ frame, source, resolve, reject })));
  }

  whenReady(url: string | undefined): Promise<void> {
    return new Promise((resolve) => this.readies.push({ url, resolve }));
  }

  /**
   * Frames left the queue: each waiting write whose source has room now goes to `go`, in order (all of them with
   * `force`, when the writer closes), then the `ready()`s whose source (or, without a url, the whole queue) is below
   * its mark resolve. True when a `ready()` resolved (the writer's `'drain'` event).
   */
  release(
    hasRoom: (size: number, url?: string) => boolean,
    go: (write: WaitingWrite) => void,
    force: boolean,
  ): boolean {
    if (this.writes.length > 0) {
      const blocked = new Set<SourceQueue>();
      const writes = this.writes;
      this.writes = [];
      for (let i = 0; i < writes.length; i++) {
        const write = writes[i]!;
        if (!force && (blocked.has(write.source) || !hasRoom(write.frame.data.byteLength, write.frame.url))) {
          blocked.add(write.source);
          this.writes.push(write);
          // Every source that has writes waiting is blocked: the rest wait too (no scan of a long list per ack).
          if (blocked.size === this.perSource.size) {
            for (let j = i + 1; j < writes.length; j++) this.writes.push(writes[j]!);
            break;
          }
          continue;
        }
        const left = this.perSource.get(write.source)! - 1;
        if (left === 0) this.perSource.delete(write.source);
        else this.perSource.set(write.source, left);
        go(write);
      }
      this.count = this.writes.length;
    }
    if (this.readies.length === 0) return false;
    const before = this.readies.length;
    this.readies = this.readies.filter((r) => {
      const room = force || (!this.waiting(r.url) && hasRoom(0, r.url));
      if (room) r.resolve();
      return !room;
    });
    return this.readies.length < before;
  }

  /** The writer failed: nothing will make room any more. Waiting writes fail with `error`; `ready()`s resolve. */
  failAll(error: unknown): void {
    const writes = this.writes;
    this.writes = [];
    this.count = 0;
    this.perSource.clear();
    for (const write of writes) write.reject(error);
    for (const r of this.readies.splice(0)) r.resolve();
  }
}
