import { extensionOf, guardFile, type Backend } from '@vlink/bag-core';
import { urlSplitFiles } from '@vlink/bag-core/internal';
import { loadCodecs } from './codecs.js';
import { openMcapFileWriter } from './file-backend-writer.js';
import { SourceReadable } from './io/source-readable.js';
import { VcapFileWriter } from './vcap/vcap-file-writer.js';
import { VcapReader } from './vcap/vcap-reader.js';
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
    return openMcapFileWriter(
      path,
      (writable, codecs) => new VcapFileWriter({ writable, codecs, config, context, file: path }),
    );
  },
  async openReader(path, options) {
    if (extensionOf(path) === '.vcapx') return openVcapx(path, options);
    await guardFile(path, { confineTo: options.confineTo });
    return VcapReader.open(path, options, await loadCodecs());
  },
  /**
   * A `.vcap` behind a url (e.g. `s3://`): read through its summary and indexes, a range at a time. A `.vcapx`: its
   * manifest read from the source, each segment through a source of its own.
   */
  async openSource(source, options) {
    if (extensionOf(source.name) === '.vcapx') {
      try {
        return await openVcapx(source.name, { ...options, files: await urlSplitFiles(source) });
      } finally {
        source.close();
      }
    }
    return VcapReader.open(source.name, options, await loadCodecs(), new SourceReadable(source));
  },
  /** A repaired copy of one `.vcap` (`repairBag`); split recordings are repaired segment by segment by core. */
  async salvage(source, target, options) {
    return salvageVcap(source, target, await loadCodecs(), options);
  },
  /** A single `.vcap` has no rewritable tag (format reference §5.4 step 9); a `.vcapx` has it in its manifest (§6). */
  async tag(path, name) {
    return extensionOf(path) === '.vcapx' ? tagVcapx(path, name) : false;
  },
};
