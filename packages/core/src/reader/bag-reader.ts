import type { BackendReader } from '../backend/backend.js';
import { backendFor } from '../backend/registry.js';
import { BagError } from '../errors.js';
import type { ReaderOptions } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info } from '../model/info.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { toCursorQuery, type CursorConfig } from './cursor-config.js';

export interface FramesOptions extends CursorConfig {
  signal?: AbortSignal;
}

/** How many frames an async iterator hands out before letting the event loop breathe. */
const YIELD_EVERY = 512;

/**
 * Reads a bag; the extension picks the backend. Three ways to read, all with url and time filters:
 * the VLink synchronous cursor (`openCursor` / `readNext`), an async iterator (`frames()`), and playback.
 *
 * A frame's `data` is a view that is valid until the next read: copy it (`data.slice()`) to keep it.
 */
export class BagReader {
  readonly path: string;
  protected readonly backend: BackendReader;
  private info: Info | undefined;
  private cursor: IterableIterator<Frame> | undefined;
  private atEof = false;
  private failed = false;
  private lastError: BagError | undefined;
  private closed = false;

  protected constructor(path: string, backend: BackendReader) {
    this.path = path;
    this.backend = backend;
  }

  static async create(path: string, options: ReaderOptions = {}): Promise<BagReader> {
    if (typeof path !== 'string' || path.length === 0) throw new BagError('INVALID_ARGUMENT', 'bag path must not be empty');
    const backend = backendFor(path);
    const reader = await backend.openReader(path, { readOnly: options.readOnly ?? true, tryToFix: options.tryToFix ?? false });
    return new this(path, reader);
  }

  getInfo(): Info {
    this.ensureOpen();
    return (this.info ??= this.backend.info());
  }

  getSchemas(): SchemaData[] {
    this.ensureOpen();
    return this.backend.schemas();
  }

  /** (Re)opens the synchronous cursor; clears `eof()` and `fail()`. */
  openCursor(config: CursorConfig = {}): boolean {
    this.ensureOpen();
    this.atEof = false;
    this.failed = false;
    this.lastError = undefined;
    try {
      this.cursor = this.backend.frames(toCursorQuery(config));
      return true;
    } catch (error) {
      this.setFailed(error);
      return false;
    }
  }

  /**
   * Reads the next frame into `frame` (VLink `read_next`); opens a default cursor on first use. Returns false at the
   * end (`eof()`) or on an error (`fail()`, `getLastError()`).
   */
  readNext(frame: Frame): boolean {
    const next = this.next();
    if (!next) return false;
    frame.timestamp = next.timestamp;
    frame.url = next.url;
    frame.data = next.data;
    frame.serType = next.serType;
    frame.schemaType = next.schemaType;
    frame.actionType = next.actionType;
    return true;
  }

  /** The next frame of the cursor, or undefined at the end or on error. */
  next(): Frame | undefined {
    if (this.atEof || this.failed) return undefined;
    if (!this.cursor && !this.openCursor()) return undefined;
    try {
      const step = this.cursor!.next();
      if (step.done) {
        this.atEof = true;
        return undefined;
      }
      return step.value;
    } catch (error) {
      this.setFailed(error);
      return undefined;
    }
  }

  eof(): boolean {
    return this.atEof;
  }

  fail(): boolean {
    return this.failed;
  }

  getLastError(): BagError | undefined {
    return this.lastError;
  }

  /** Async iterator over frames; a separate cursor, independent of `openCursor`. Errors are thrown, not flagged. */
  async *frames(options: FramesOptions = {}): AsyncGenerator<Frame, void, undefined> {
    this.ensureOpen();
    const { signal } = options;
    const iterator = this.backend.frames(toCursorQuery(options));
    let sinceYield = 0;
    try {
      for (;;) {
        if (signal?.aborted) throw new BagError('ABORTED', 'reading was aborted', { file: this.path, cause: signal.reason });
        const step = iterator.next();
        if (step.done) return;
        yield step.value;
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await yieldToEventLoop();
        }
      }
    } finally {
      iterator.return?.();
    }
  }

  check(): Promise<boolean> {
    return this.maintenance('check', () => this.backend.check?.());
  }

  reindex(): Promise<boolean> {
    return this.maintenance('reindex', () => this.backend.reindex?.());
  }

  fix(rebuild = false): Promise<boolean> {
    return this.maintenance('fix', () => this.backend.fix?.(rebuild));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cursor?.return?.();
    this.cursor = undefined;
    this.backend.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
  }

  private async maintenance(what: string, run: () => Promise<boolean> | undefined): Promise<boolean> {
    this.ensureOpen();
    const result = run();
    if (result === undefined) return false;
    const ok = await result;
    this.info = undefined;
    return ok;
  }

  private ensureOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }

  private setFailed(error: unknown): void {
    this.failed = true;
    this.lastError = BagError.wrap(error, 'IO_ERROR', 'read failed', { file: this.path });
  }
}
