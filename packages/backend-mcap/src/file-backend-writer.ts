import type { BackendWriter, Frame, SchemaData } from '@vlink/bag-core';
import { type Codecs, loadCodecs } from './codecs.js';
import { FileWritable } from './io/file-writable.js';

/**
 * What this package's single-file writers (`VcapFileWriter`, `PlainMcapWriter`) are: `BackendWriter`s themselves, so
 * core calls their own `write` with nothing in between (a bound or forwarding `write` of a wrapper cost ~10 ns a frame
 * on Bun, hand-measured); each checks at close that its file ends with the MCAP magic (`Writable.verifyMagicEnd`).
 */
export interface McapFileWriterLike extends BackendWriter {
  readonly file: string;
  setCounters(table: Record<string, Record<string, number>>): void;
}

/**
 * A `BackendWriter` for one MCAP file at `path`: `make` builds the writer on a `FileWritable` (closed again if `make`
 * throws).
 */
export async function openMcapFileWriter(
  path: string,
  make: (writable: FileWritable, codecs: Codecs) => McapFileWriterLike,
): Promise<BackendWriter> {
  const codecs = await loadCodecs();
  const writable = new FileWritable(path);
  try {
    return make(writable, codecs);
  } catch (error) {
    writable.close();
    throw error;
  }
}

/**
 * A `.vcapx` segment's writer seen through the writer seam: its file writer, with the split bookkeeping in front of
 * `write` (`VcapSegment`); the other calls go straight through, and closing happens once.
 */
export abstract class McapFileBackendWriter<W extends McapFileWriterLike = McapFileWriterLike>
  implements BackendWriter
{
  private closed = false;
  /** The segment's bookkeeping, then the file writer's own `write`. */
  abstract write: (frame: Frame, urlId: number) => void;
  constructor(protected readonly writer: W) {}
  writeSchema(schema: SchemaData): void {
    this.writer.writeSchema(schema);
  }
  setUrlLoss(url: string, loss: number): void {
    this.writer.setUrlLoss(url, loss);
  }
  commit(): void {
    this.writer.commit();
  }
  tick(): void {
    this.writer.tick();
  }
  setCounters(table: Record<string, Record<string, number>>): void {
    this.writer.setCounters(table);
  }
  currentFile(): string {
    return this.writer.file;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.writer.close();
  }
}
