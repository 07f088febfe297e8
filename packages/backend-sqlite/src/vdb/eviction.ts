import type { SqliteConnection, SqliteStatement } from '../driver/driver.js';
import { frameOriginalSize, isCompressionFrame } from './compression.js';
import type { FileState } from './file-state.js';
import type { VdbRecording } from './recording.js';
import type { PublishTimeTable } from './side-tables.js';
import * as SQL from './sql.js';

/**
 * The §2.8 limit rule with `enableLimit`: the oldest rows are evicted until the file is back under its row and byte
 * limits, and every counter they fed (file, url, recording; first/last times) is corrected — a framed blob counts
 * its original size, as it did when written. SQL errors are thrown as they are: the writer rolls back.
 */
export class RowEviction {
  private readonly oldest: SqliteStatement;
  private readonly remove: SqliteStatement;
  private readonly next: SqliteStatement;

  constructor(
    db: SqliteConnection,
    private readonly state: FileState,
    private readonly recording: VdbRecording,
    private readonly publishTimes: PublishTimeTable,
    private readonly compressing: boolean,
  ) {
    this.oldest = db.prepare(SQL.SELECT_OLDEST);
    this.remove = db.prepare(SQL.DELETE_ROW);
    this.next = db.prepare(SQL.SELECT_NEXT_OF_URL);
  }

  evictUntil(maxRowCount: number, maxBytesSize: number): void {
    const { state, recording } = this;
    while (state.rows > maxRowCount || state.bytes > maxBytesSize) {
      const row = this.oldest.get();
      if (row === undefined) break;
      const rowid = row['rowid'] as number;
      const id = row['url'] as number;
      this.remove.run(rowid);
      this.publishTimes.remove(rowid);
      const size = this.evictedSize(row['n'] as number | null, row['head'], row['tail']);
      const fu = state.byId.get(id);
      state.rows--;
      state.bytes -= size;
      recording.count--;
      recording.size -= size;
      if (fu === undefined) continue;
      const rec = fu.rec;
      fu.count--;
      fu.size -= size;
      rec.count--;
      rec.size -= size;
      if (fu.firstTs >= 0) {
        const following = this.next.get(rowid, id);
        const first = following === undefined ? -1 : (following['elapsed'] as number);
        fu.firstTs = first;
        rec.firstTs = first;
        if (first < 0) fu.lastTs = rec.lastTs = -1;
      }
    }
  }

  private evictedSize(length: number | null, head: unknown, tail: unknown): number {
    if (
      this.compressing &&
      (length ?? 0) >= 13 &&
      head instanceof Uint8Array &&
      tail instanceof Uint8Array &&
      head.length === 8 &&
      tail.length === 4
    ) {
      const probe = new Uint8Array(13);
      probe.set(head, 0);
      probe.set(tail, 9);
      if (isCompressionFrame(probe)) return frameOriginalSize(head);
    }
    return length ?? 0;
  }
}
