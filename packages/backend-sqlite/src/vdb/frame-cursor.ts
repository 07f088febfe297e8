import { ActionType, BagError, parseAction, type Frame } from '@vlink/bag-core';
import type { SqlRow, SqliteStatement } from '../driver/driver.js';
import { decompressFrame, isCompressionFrame } from './compression.js';
import { plain, type VdbFacts } from './facts.js';
import { sqliteError } from './sqlite-errors.js';
import { INT64_LIMIT, integerOf, storedType } from './stored-types.js';

/** A hand-written iterator (not a generator) to keep the per-row cost at one driver step and one object. */
export class FrameCursor implements IterableIterator<Frame> {
  private lastActionText: unknown = undefined;
  private lastAction = ActionType.Unknown;
  private done = false;
  private readonly result: IteratorYieldResult<Frame> = { done: false, value: undefined as unknown as Frame };
  /**
   * Whether the rows have a `publish` column (the file has the side table: see `SQL.SELECT_FRAMES_WITH_PUBLISH`).
   * Asked of a row without it, the name is a missing key, and a miss cost more than the rest of the row's work on Deno
   * (whose `node:sqlite` rows are not plain objects): 270 ns a row, 64 B rows read 12 % slower than the raw loop.
   */
  private readonly withPublish: boolean;
  /** Rows stepped so far (1-based number of the current row in read order), to name a damaged row. */
  private rowNumber = 0;
  /**
   * The last frame's time, when the rows come `ORDER BY elapsed` through the file's elapsed index: SQLite trusts the
   * index for that order, so a time going back means a damaged index (found by hand: one index page copied over
   * another, and a strict read gave 1,010 of 3,000 frames twice, without an error).
   */
  private lastElapsed = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly rows: IterableIterator<SqlRow>,
    private readonly statement: SqliteStatement,
    private readonly facts: VdbFacts,
    private readonly path: string,
    private readonly owners: Set<FrameCursor>,
    /** `tryToFix`: damage ends the cursor (reported here) instead of throwing, so what SQLite can read is read. */
    private readonly onDamage?: (error: BagError) => void,
    /**
     * The rows a whole read must step over (the header's count of a closed file), checked at the end: an index that
     * lost entries reads short without an error from SQLite (found by hand: a leaf page of the elapsed index copied
     * over its root, and a strict read gave 1,010 of 3,000 frames). Rows of a url id VLinkUrls does not name count:
     * they are skipped as VLink's readers skip them, not missing.
     */
    private readonly expectedRows?: number,
  ) {
    this.withPublish = facts.hasPublishTimes;
  }

  [Symbol.iterator](): IterableIterator<Frame> {
    return this;
  }

  next(): IteratorResult<Frame> {
    if (this.done) return { done: true, value: undefined };
    const byId = this.facts.byId;
    const byIndex = this.facts.byIndex;
    for (;;) {
      let step: IteratorResult<SqlRow>;
      try {
        step = this.rows.next();
      } catch (error) {
        this.release();
        const bagError = sqliteError(error, 'IO_ERROR', 'cannot read VLinkDatas', this.path);
        if (this.onDamage && bagError.code === 'CORRUPT_FILE') {
          this.onDamage(bagError);
          return { done: true, value: undefined };
        }
        throw bagError;
      }
      if (step.done === true) {
        if (this.expectedRows !== undefined && this.rowNumber !== this.expectedRows) {
          this.finish();
          throw new BagError(
            'CORRUPT_FILE',
            `VLinkDatas gave ${this.rowNumber} rows, the header counts ${this.expectedRows}: the table or its index is damaged (run check or fix)`,
            { file: this.path },
          );
        }
        this.finish();
        return { done: true, value: undefined };
      }
      const row = step.value;
      this.rowNumber++;
      const id = row['url'] as number;
      const entry = byIndex !== undefined ? byIndex[id] : byId.get(id);
      if (entry === undefined) continue; // a row of an unknown url is skipped, as VLink's readers do
      const actionText = row['action'];
      if (actionText !== this.lastActionText) {
        this.lastActionText = actionText;
        this.lastAction = parseAction(typeof actionText === 'string' ? actionText : undefined);
      }
      let data = row['data'] as Uint8Array | null;
      if (data === null) data = EMPTY;
      else if (data.constructor !== Uint8Array) {
        // A driver's Buffer (better-sqlite3), or a TEXT/INTEGER/REAL value a hand-made file stored as the payload.
        if (!(data instanceof Uint8Array)) return this.damaged(entry.url, `data is ${storedType(data)}, not a BLOB`);
        data = plain(data);
      }
      // One typeof and one remainder per row (the fast path): an INTEGER column as SQLite hands it to a driver. NULL,
      // TEXT (which the NDJSON writer would print unquoted) and a REAL that no INTEGER can hold are damage.
      let elapsed = row['elapsed'] as number;
      if (typeof elapsed !== 'number' || elapsed % 1 !== 0 || elapsed > INT64_LIMIT || elapsed < -INT64_LIMIT) {
        const asNumber = integerOf(elapsed);
        if (asNumber === undefined) return this.damaged(entry.url, `elapsed is ${storedType(elapsed)}, not an INTEGER`);
        elapsed = asNumber;
      }
      if (elapsed < this.lastElapsed && this.facts.hasElapsedIndex)
        return this.damaged(
          entry.url,
          `elapsed ${elapsed} after ${this.lastElapsed}: the elapsed index is out of order (a damaged index; run check or fix)`,
          'CORRUPT_FILE',
        );
      this.lastElapsed = elapsed;
      if (this.facts.compressed && isCompressionFrame(data)) {
        try {
          data = decompressFrame(data);
        } catch (error) {
          this.release();
          // Not `BagError.wrap`: the codec's own BagError would pass through it unchanged and name neither the file
          // nor the url of the damaged row.
          const detail = BagError.isInstance(error) ? error.reason : String((error as Error)?.message ?? error);
          const bagError = new BagError('CORRUPT_DATA', `cannot decompress a row: ${detail}`, {
            file: this.path,
            url: entry.url,
            cause: error,
          });
          if (this.onDamage) {
            this.onDamage(bagError);
            return { done: true, value: undefined };
          }
          throw bagError;
        }
      }
      let publish = this.withPublish ? row['publish'] : undefined;
      // The side table is the file's too: its publish time obeys the rule of elapsed (NULL: none was stored).
      if (publish != null && (typeof publish !== 'number' || publish % 1 !== 0 || Math.abs(publish) > INT64_LIMIT)) {
        publish = integerOf(publish);
        if (publish === undefined)
          return this.damaged(entry.url, `publish is ${storedType(row['publish'])}, not an INTEGER`);
      }
      // One result object per cursor: for-of and spread read `value` before the next step, and each frame is new.
      this.result.value = {
        timestamp: elapsed,
        url: entry.url,
        data,
        serType: entry.ser,
        schemaType: entry.schemaType,
        actionType: this.lastAction,
        // NULL (no side-table entry, or no side table): the log time; drivers may return a bigint.
        publishTime: publish == null ? elapsed : (publish as number),
      };
      return this.result;
    }
  }

  return(): IteratorResult<Frame> {
    if (!this.done) {
      try {
        this.rows.return?.();
      } finally {
        this.finish();
      }
    }
    return { done: true, value: undefined };
  }

  /**
   * A row whose stored types no VLink writer produces (a hand-made or damaged file), or that comes out of the elapsed
   * index's order (`CORRUPT_FILE`): `CORRUPT_DATA`, thrown, or with
   * `tryToFix` reported to `onDamage` and the end of the cursor, as a payload that fails to decompress is. Never a
   * frame: a text timestamp would be pasted into NDJSON as it is, and a non-bytes payload fails far from the file.
   */
  private damaged(
    url: string,
    what: string,
    code: 'CORRUPT_DATA' | 'CORRUPT_FILE' = 'CORRUPT_DATA',
  ): IteratorResult<Frame> {
    this.release();
    const error = new BagError(code, `row ${this.rowNumber} in read order: ${what}`, {
      file: this.path,
      url,
    });
    if (!this.onDamage) throw error;
    this.onDamage(error);
    return { done: true, value: undefined };
  }

  /** Ends the cursor after a failure; a second error while cleaning up would only hide the first one. */
  private release(): void {
    try {
      this.return();
    } catch {
      // the caller is about to throw the original failure
    }
  }

  private finish(): void {
    this.done = true;
    this.owners.delete(this);
    this.statement.finalize();
  }
}

const EMPTY = new Uint8Array(0);
