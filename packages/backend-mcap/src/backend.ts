import {
  BagError,
  extensionOf,
  guardFile,
  type Backend,
  type BackendWriter,
  type Frame,
  type SchemaData,
} from '@vlink/bag-core';
import { loadCodecs } from './codecs.js';
import { FileWritable } from './io/file-writable.js';
import { SourceReadable } from './io/source-readable.js';
import { VcapFileWriter } from './vcap/vcap-file-writer.js';
import { VcapReader } from './vcap/vcap-reader.js';
import { verifyTrailingMagic } from './vcap/verify-tail.js';
import { salvageVcap } from './maintenance/fix-file.js';
import { openVcapx, tagVcapx } from './vcapx/vcapx-reader.js';
import { createVcapxWriter } from './vcapx/vcapx-writer.js';

/**
 * The `.vcap` backend: VLink's MCAP mapping (format reference §5), written by our own chunk writer, read with `VcapReader`; and
 * `.vcapx` split recordings of such segments (format reference §6).
 */
export const mcapBackend: Backend = {
  name: 'mcap',
  extensions: ['.vcap', '.vcapx'],
  // Async BagWriters import this module in a worker and pick the backend by name.
  workerModule: import.meta.url,
  async createWriter(path, config, context) {
    if (extensionOf(path) === '.vcapx') return createVcapxWriter(path, config, context);
    const codecs = await loadCodecs();
    const writable = new FileWritable(path);
    try {
      return new VcapBackendWriter(new VcapFileWriter({ writable, codecs, config, context, file: path }));
    } catch (error) {
      writable.close();
      throw error;
    }
  },
  async openReader(path, options) {
    if (extensionOf(path) === '.vcapx') return openVcapx(path, options);
    await guardFile(path, { confineTo: options.confineTo });
    return VcapReader.open(path, options, await loadCodecs());
  },
  /** A `.vcap` behind a url (e.g. `s3://`): read through its summary and indexes, a range at a time. */
  async openSource(source, options) {
    if (extensionOf(source.name) === '.vcapx')
      throw new BagError('NOT_SUPPORTED', 'a .vcapx behind a url is not readable yet', { file: source.name });
    return VcapReader.open(source.name, options, await loadCodecs(), new SourceReadable(source));
  },
  /** A repaired copy of one `.vcap` (`repairBag`); split recordings are repaired segment by segment by core. */
  async salvage(source, target, options) {
    return salvageVcap(source, target, await loadCodecs(), options?.onProgress);
  },
  /** A single `.vcap` has no rewritable tag (format reference §5.4 step 9); a `.vcapx` has it in its manifest (§6). */
  async tag(path, name) {
    return extensionOf(path) === '.vcapx' ? tagVcapx(path, name) : false;
  },
};

class VcapBackendWriter implements BackendWriter {
  private closed = false;
  constructor(private readonly writer: VcapFileWriter) {}
  write(frame: Frame): void {
    this.writer.write(frame);
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
