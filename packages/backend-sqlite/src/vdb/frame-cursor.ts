import { ActionType, BagError, parseAction, type Frame } from '@vlink/bag-core';
import type { SqlRow, SqliteStatement } from '../driver/driver.js';
import { decompressFrame, isCompressionFrame } from './compression.js';
import { plain, type VdbFacts } from './facts.js';
import { sqliteError } from './sqlite-errors.js';

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

  constructor(
    private readonly rows: IterableIterator<SqlRow>,
    private readonly statement: SqliteStatement,
    private readonly facts: VdbFacts,
    private readonly path: string,
    private readonly owners: Set<FrameCursor>,
    /** `tryToFix`: damage ends the cursor (reported here) instead of throwing, so what SQLite can read is read. */
    private readonly onDamage?: (error: BagError) => void,
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
        this.finish();
        return { done: true, value: undefined };
      }
      const row = step.value;
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
      else if (data.constructor !== Uint8Array) data = plain(data);
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
      // One result object per cursor: for-of and spread read `value` before the next step, and each frame is new.
      const elapsed = row['elapsed'] as number;
      const publish = this.withPublish ? row['publish'] : undefined;
      this.result.value = {
        timestamp: elapsed,
        url: entry.url,
        data,
        serType: entry.ser,
        schemaType: entry.schemaType,
        actionType: this.lastAction,
        // NULL (no side-table entry, or no side table): the log time; drivers may return a bigint.
        publishTime: publish == null ? elapsed : Number(publish),
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
