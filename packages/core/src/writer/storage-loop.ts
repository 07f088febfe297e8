import type { BackendWriter } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { unrefTimer } from '../util/schedule.js';
import type { CounterTable } from './drop-counters.js';
import type { DropReason } from './writer-stats.js';

/** VLink's commit-check timer: the backend's `tick()` (and the counters hand-over) once a second. */
const TICK_MS = 1000;

export interface StorageLoopOptions {
  /** The file, for the context of errors. */
  path: string;
  /** The whole drop table the backend stores: within about a second of `countersChanged()`, and at close. */
  counters(): CounterTable;
  /**
   * The loop's own timers failed the writer (the periodic tick, the counters hand-over). Nobody is calling then, so
   * this is the only way the failure is heard of; the other methods return or expose their failures to the caller.
   */
  onTimerFailure(error: BagError): void;
}

/**
 * How frames reach a `BackendWriter`, wherever it runs: on the producer's thread (`LocalEngine`) or in the writer
 * worker (`writer-worker/writer-service.ts`). One rule for both: a write that fails with `SCHEMA_CONFLICT`,
 * `LIMIT_REACHED` or `INVALID_ARGUMENT` drops that frame only; any other failure is a storage error, which fails the
 * writer, and every frame after it is dropped for the same reason. Durable pushes resolve on a successful commit only.
 * The engines keep what differs between them: where frames wait, how outcomes are reported, and the acks.
 */
export class StorageLoop {
  /** The storage error that failed the writer; undefined while it works. */
  failed: BagError | undefined;
  /** Why the last `write` returned false, and the error that says so (valid until the next `write`). */
  dropReason: DropReason = 'storageError';
  dropError: BagError | undefined;
  /** The last `write` returned false because it failed the writer just now (not because it had failed before). */
  dropFailedWriter = false;
  private closed = false;
  private countersDirty = false;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private countersTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly writer: BackendWriter,
    private readonly options: StorageLoopOptions,
  ) {}

  /**
   * Writes one frame; false when it was not stored (`dropReason`, `dropError` say why). One call per frame and no
   * allocation on success: the worker calls it for every frame of a batch with the same reused `Frame` object.
   * `urlId` is the recording's id of `frame.url` (`BackendWriter.write`).
   */
  write(frame: Frame, urlId: number): boolean {
    if (this.failed !== undefined) return this.dropped('storageError', this.failed, false);
    try {
      this.writer.write(frame, urlId);
      return true;
    } catch (error) {
      // Out of line, so that this method stays small enough to be inlined into the engines' loops.
      return this.refused(error, frame.url);
    }
  }

  /**
   * Commits for durable pushes: undefined when what was written is on disk, else why their promises must fail — the
   * commit failed (which fails the writer), or a storage error rolled back what the backend had not committed (the
   * open SQLite transaction, the open chunk), frames written before it included, so an empty commit proves nothing.
   */
  commit(): BagError | undefined {
    if (this.failed !== undefined) return this.failed;
    try {
      this.writer.commit();
      return undefined;
    } catch (error) {
      return this.fail(error, 'commit failed');
    }
  }

  /** A rejected schema is a warning (returned), not a failure. */
  writeSchema(schema: SchemaData): BagError | undefined {
    if (this.closed) return undefined;
    try {
      this.writer.writeSchema(schema);
      return undefined;
    } catch (error) {
      return BagError.wrap(error, 'SCHEMA_CONFLICT', 'pushSchema failed', { file: this.options.path });
    }
  }

  /**
   * Starts the once-a-second tick. `unref`: it must not keep a process alive (the producer's thread; a worker's
   * lifetime is its parent's business).
   */
  startTicking(options: { unref: boolean }): void {
    if (this.tickTimer !== undefined || this.closed) return;
    this.tickTimer = setInterval(() => this.tick(), TICK_MS);
    if (options.unref) unrefTimer(this.tickTimer);
  }

  /**
   * The drop table changed: the backend gets it at the next tick, so a firehose of drops costs one table a second,
   * not one per drop. Without a tick (sync mode) a timer of its own hands it over a second later.
   */
  countersChanged(): void {
    if (this.closed || !this.writer.setCounters) return;
    this.countersDirty = true;
    if (this.tickTimer !== undefined || this.countersTimer !== undefined) return;
    this.countersTimer = setTimeout(() => {
      this.countersTimer = undefined;
      if (!this.closed && this.failed === undefined && this.countersDirty) this.handCounters();
    }, TICK_MS);
    unrefTimer(this.countersTimer);
  }

  /** The file being written; '' once closed or when the backend cannot say. */
  currentFile(): string {
    if (this.closed) return '';
    try {
      return this.writer.currentFile();
    } catch {
      return '';
    }
  }

  /** Stores the counters and closes the file; the error when that failed (the writer has failed then). */
  close(): BagError | undefined {
    if (this.closed) return undefined;
    this.closed = true;
    if (this.tickTimer !== undefined) clearInterval(this.tickTimer);
    if (this.countersTimer !== undefined) clearTimeout(this.countersTimer);
    try {
      this.writer.setCounters?.(this.options.counters());
      this.writer.close();
      return undefined;
    } catch (error) {
      return this.fail(error, 'close failed');
    }
  }

  /** Fails the writer with `error` (the first failure is the one kept) and returns it as a BagError. */
  fail(error: unknown, what: string): BagError {
    const bagError = BagError.wrap(error, 'IO_ERROR', what, { file: this.options.path });
    this.failed ??= bagError;
    return bagError;
  }

  private tick(): void {
    if (this.closed || this.failed !== undefined) return;
    if (this.countersDirty) {
      this.handCounters();
      if (this.failed !== undefined) return;
    }
    try {
      this.writer.tick();
    } catch (error) {
      this.options.onTimerFailure(this.fail(error, 'periodic commit failed'));
    }
  }

  private handCounters(): void {
    this.countersDirty = false;
    try {
      this.writer.setCounters?.(this.options.counters());
    } catch (error) {
      this.options.onTimerFailure(this.fail(error, 'storing the counters failed'));
    }
  }

  private refused(error: unknown, url: string): false {
    const bagError = BagError.wrap(error, 'IO_ERROR', 'write failed', { file: this.options.path, url });
    const reason = dropReasonOf(bagError);
    if (reason === 'storageError') this.failed = bagError;
    return this.dropped(reason, bagError, reason === 'storageError');
  }

  private dropped(reason: DropReason, error: BagError, failedWriter: boolean): false {
    this.dropReason = reason;
    this.dropError = error;
    this.dropFailedWriter = failedWriter;
    return false;
  }
}

/** A refusal of this frame only, or a storage error that fails the writer. */
function dropReasonOf(error: BagError): DropReason {
  if (error.code === 'SCHEMA_CONFLICT') return 'schemaConflict';
  if (error.code === 'LIMIT_REACHED') return 'limit';
  // A frame a backend cannot store as given (a url with a lone surrogate, `checkStorableNames`): that frame only.
  if (error.code === 'INVALID_ARGUMENT') return 'invalidFrame';
  return 'storageError';
}
