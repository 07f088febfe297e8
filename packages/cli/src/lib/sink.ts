import { BagError, BagWriter, type BagWriterOptions, type Frame, type SchemaData } from '@vlink/bag';
import { isUrl } from './bag-io.js';
import { CliError, withNote } from './errors.js';
import { removePartialOutput } from './partial-output.js';

/**
 * A writer for clone and merge: synchronous (each frame is stored before `push` returns, so a reader's reused payload
 * buffer can be handed over as is) and strict (the first refused frame or storage error stops the copy with its
 * reason instead of being counted and skipped).
 */
export class CopySink {
  private firstError: BagError | undefined;
  frames = 0;
  bytes = 0;

  private constructor(
    readonly writer: BagWriter,
    readonly path: string,
  ) {
    writer.registerErrorCallback((error) => (this.firstError ??= error));
  }

  static async open(path: string, options: BagWriterOptions): Promise<CopySink> {
    try {
      return new CopySink(await BagWriter.create(path, { ...options, syncMode: true }), path);
    } catch (error) {
      throw isSegmentInTheWay(error) ? withNote(error, 'pass -f/--force to overwrite it') : error;
    }
  }

  pushSchema(schema: SchemaData): void {
    if (!this.writer.pushSchema(schema)) {
      throw new CliError(
        `schema ${schema.name}: ${this.firstError?.message ?? 'conflicts with a schema already written'}`,
        this.path,
        undefined,
        { cause: this.firstError },
      );
    }
  }

  push(frame: Frame): void {
    if (this.writer.push(frame) < 0) {
      const reason = this.firstError ?? this.writer.stats().lastError;
      // The copy stops here; how many frames it had written goes with the note on what became of the output.
      const written = `after ${this.frames} frame${this.frames === 1 ? '' : 's'}`;
      throw new CliError(
        `cannot write frame ${frame.url} @${frame.timestamp}µs: ${reason?.message ?? 'refused by the writer'} (${written})`,
        this.path,
        undefined,
        {
          cause: reason,
        },
      );
    }
    this.frames++;
    this.bytes += frame.data.byteLength;
  }

  async close(): Promise<void> {
    await this.writer.close();
    if (this.firstError && this.writer.fail()) throw this.firstError;
  }

  /**
   * Ends a copy that failed with `error` (reading, a refused schema or frame, closing): a closed output would pass
   * for a complete bag holding part of the source, so it is deleted (or, for a url, never uploaded). Returns the
   * error to report, saying what became of the output.
   */
  async abandon(error: unknown): Promise<CliError> {
    // `quit` closes the file without what `close` does after (the summary sidecar, a url's upload).
    this.writer.quit();
    try {
      await this.writer.waitForQuit();
    } catch {
      // The copy already failed; that is the error to report.
    }
    const hint = isSegmentInTheWay(error) ? ' (pass -f/--force to overwrite that file)' : '';
    if (isUrl(this.path)) return withNote(error, `the partial output was not uploaded to ${this.path}${hint}`);
    if (removePartialOutput(this.path)) return withNote(error, `the partial output ${this.path} was removed${hint}`);
    return withNote(error, `the partial output ${this.path} could not be removed: it is not a complete copy${hint}`);
  }
}

/** The writer refused a segment name an existing file has (`overwriteSegments: false`, no `--force`). */
function isSegmentInTheWay(error: unknown): boolean {
  // A refused frame is reported as a CliError whose cause is the writer's error.
  const bagError = error instanceof CliError ? error.cause : error;
  return (
    BagError.isInstance(bagError) &&
    bagError.code === 'IO_ERROR' &&
    bagError.reason.startsWith('a file already exists where the next segment would be written')
  );
}
