import type { BackendWriter, Frame, RecordingContext, ResolvedWriterConfig, SchemaData } from '@vlink/bag-core';
import { FileWritable, loadCodecs, PlainMcapWriter, verifyTrailingMagic } from '@vlink/bag-mcap';

/**
 * The writing half of the `.mcap` backend: `@vlink/bag-mcap`'s `PlainMcapWriter` (profile-neutral MCAP with the
 * well-known encodings) on a file. Reading `.mcap` stays with `McapForeignReader`; see ARCHITECTURE.md.
 */
export async function createPlainMcapWriter(
  path: string,
  config: ResolvedWriterConfig,
  context: RecordingContext,
): Promise<BackendWriter> {
  const codecs = await loadCodecs();
  const writable = new FileWritable(path);
  try {
    return new PlainMcapBackendWriter(new PlainMcapWriter({ writable, codecs, config, context, file: path }));
  } catch (error) {
    writable.close();
    throw error;
  }
}

class PlainMcapBackendWriter implements BackendWriter {
  private closed = false;
  constructor(private readonly writer: PlainMcapWriter) {}
  write(frame: Frame): void {
    this.writer.write(frame);
  }
  writeSchema(schema: SchemaData): void {
    this.writer.writeSchema(schema);
  }
  setUrlLoss(): void {
    this.writer.setUrlLoss();
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
