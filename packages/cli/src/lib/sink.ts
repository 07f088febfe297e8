import { type BagError, BagWriter, type BagWriterOptions, type Frame, type SchemaData } from '@vlink/bag';
import { CliError } from './errors.js';

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
    return new CopySink(await BagWriter.create(path, { ...options, syncMode: true }), path);
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
      // The copy stops here; what it wrote stays in a closed, readable output: say how much that is.
      const kept = `the output keeps the ${this.frames} frame${this.frames === 1 ? '' : 's'} written before it`;
      throw new CliError(
        `cannot write frame ${frame.url} @${frame.timestamp}µs: ${reason?.message ?? 'refused by the writer'}; ${kept}`,
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
}
