import type { CursorQuery } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { toCursorQuery, type CursorConfig } from './cursor-config.js';

/**
 * VLink's synchronous cursor state (format reference §7.5): `openCursor` (re)opens and clears `eof`/`fail`, `next` reads,
 * errors set `fail()` instead of throwing.
 */
export class SyncCursor {
  private iterator: IterableIterator<Frame> | undefined;
  private atEof = false;
  private failed = false;

  constructor(
    private readonly open: (query: CursorQuery) => IterableIterator<Frame>,
    private readonly report: (error: BagError | undefined) => void,
    private readonly file: string,
  ) {}

  openCursor(config: CursorConfig = {}): boolean {
    this.close();
    this.atEof = false;
    this.failed = false;
    this.report(undefined);
    try {
      this.iterator = this.open(toCursorQuery(config));
      return true;
    } catch (error) {
      this.setFailed(error);
      return false;
    }
  }

  next(): Frame | undefined {
    if (this.atEof || this.failed) return undefined;
    if (!this.iterator && !this.openCursor()) return undefined;
    try {
      const step = this.iterator!.next();
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

  close(): void {
    const iterator = this.iterator;
    this.iterator = undefined;
    try {
      iterator?.return?.();
    } catch {
      // Closing a finished or broken cursor has nothing left to release.
    }
  }

  private setFailed(error: unknown): void {
    this.failed = true;
    this.report(BagError.wrap(error, 'IO_ERROR', 'read failed', { file: this.file }));
  }
}
