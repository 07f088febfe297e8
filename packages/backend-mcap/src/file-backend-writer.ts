import type { BackendWriter, Frame, SchemaData } from '@vlink/bag-core';
import { type Codecs, loadCodecs } from './codecs.js';
import { FileWritable } from './io/file-writable.js';
import { verifyTrailingMagic } from './vcap/verify-tail.js';

/** What this package's single-file writers (`VcapFileWriter`, `PlainMcapWriter`) offer the Backend seam. */
export interface McapFileWriterLike {
  readonly file: string;
  /** `urlId` as `BackendWriter.write` gives it (a writer may ignore it). */
  write(frame: Frame, urlId: number): void;
  writeSchema(schema: SchemaData): void;
  setUrlLoss(url: string, loss: number): void;
  commit(): void;
  tick(): void;
  setCounters(table: Record<string, Record<string, number>>): void;
  close(): void;
}

/**
 * A `BackendWriter` for one MCAP file at `path`: `make` builds the writer on a `FileWritable` (closed again if `make`
 * throws); closing checks the file ends with the MCAP magic, so a close that did not reach the disk is an error.
 */
export async function openMcapFileWriter(
  path: string,
  make: (writable: FileWritable, codecs: Codecs) => McapFileWriterLike,
): Promise<BackendWriter> {
  const codecs = await loadCodecs();
  const writable = new FileWritable(path);
  try {
    return new McapFileBackendWriter(make(writable, codecs));
  } catch (error) {
    writable.close();
    throw error;
  }
}

/**
 * One of this package's MCAP file writers behind the writer seam: calls go straight through, and closing (once) checks
 * the file ends with the MCAP magic. A `.vcapx` segment is one of these plus its split bookkeeping.
 */
export class McapFileBackendWriter<W extends McapFileWriterLike = McapFileWriterLike> implements BackendWriter {
  private closed = false;
  /**
   * The file writer's own `write`, bound once: each frame goes straight to it, with no forwarding call of ours in
   * between (this runs once per frame). A `.vcapx` segment puts its split bookkeeping in front of it.
   */
  write: (frame: Frame, urlId: number) => void;
  constructor(protected readonly writer: W) {
    this.write = writer.write.bind(writer);
  }
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
    verifyTrailingMagic(this.writer.file);
  }
}
