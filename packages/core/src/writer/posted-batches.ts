/**
 * What each batch posted to the worker holds, oldest first, until the worker is done with it: `[seq, …]` records
 * (the slabs a batch lends, `slab-pool.ts`; the frames it takes from each source, `source-queues.ts`). Records leave
 * from the front through a head index, not `shift()` (O(n) per call on a long list), and the list is compacted now
 * and then.
 */
export class PostedBatches<T extends readonly unknown[]> {
  private readonly list: T[] = [];
  private head = 0;

  add(record: T): void {
    this.list.push(record);
  }

  /** Hands every record of a batch up to `seq` to `done`, oldest first, and forgets it. */
  takeUpTo(seq: number, done: (record: T) => void): void {
    const list = this.list;
    let head = this.head;
    while (head < list.length && (list[head]![0] as number) <= seq) done(list[head++]!);
    if (head === list.length) {
      list.length = 0;
      head = 0;
    } else if (head > 1024) {
      list.splice(0, head);
      head = 0;
    }
    this.head = head;
  }

  /** Takes back the newest record when it is batch `seq`'s and still here (a batch that was never posted). */
  takeLast(seq: number): T | undefined {
    const list = this.list;
    const last = list.at(-1);
    if (!last || last[0] !== seq || list.length <= this.head) return undefined;
    list.pop();
    return last;
  }
}
