import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BagError, type ProgressCallback, type SalvageOptions, type SalvageResult } from '@vlink/bag-core';
import { loadCodecs, type Codecs } from '../codecs.js';
import { FileReadable } from '../io/file-readable.js';
import { FileWritable } from '../io/file-writable.js';
import { checkVcapReadable, type VcapCheckReport } from './check.js';
import { emptyFixReport, type VcapFixReport } from './fix-report.js';
import { rebuildVcap } from './rebuild.js';
import { readSidecarFacts } from './sidecar-facts.js';

export interface VcapMaintenanceOptions {
  /** Default: `loadCodecs()`. */
  codecs?: Codecs;
}

/** `check()` for a `.vcap` on disk (see `checkVcapReadable`). A missing file is `NOT_FOUND`. */
export async function checkVcap(path: string, options: VcapMaintenanceOptions = {}): Promise<VcapCheckReport> {
  const codecs = options.codecs ?? (await loadCodecs());
  const readable = new FileReadable(path);
  try {
    return checkVcapReadable(readable, codecs, path);
  } finally {
    readable.close();
  }
}

/**
 * Repairs a `.vcap` on disk: rewrites it with `rebuildVcap` into a temporary file next to it, fsyncs that, and renames
 * it over the original (then fsyncs the directory), so a crash during the repair leaves the original untouched.
 * With `onlyIfBroken`, a file that already passes `check()` is left alone (`rewritten: false`). `onProgress` follows
 * the rewrite (bytes of the source, per chunk).
 */
export async function fixVcap(
  path: string,
  options: VcapMaintenanceOptions &
    Pick<SalvageOptions, 'recordingStart'> & { onlyIfBroken?: boolean; onProgress?: ProgressCallback } = {},
): Promise<VcapFixReport> {
  const codecs = options.codecs ?? (await loadCodecs());
  const source = new FileReadable(path);
  let temp: string | undefined;
  try {
    if (options.onlyIfBroken) {
      const check = checkVcapReadable(source, codecs, path);
      if (check.ok) {
        return { ...emptyFixReport(), kept: check.messages, rewritten: false };
      }
    }
    temp = join(dirname(path), `.${basename(path)}.fix-${globalThis.crypto.randomUUID()}.tmp`);
    const sink = new FileWritable(temp);
    let report: VcapFixReport;
    try {
      report = rebuildVcap(source, sink, codecs, path, options.onProgress, {
        sidecar: readSidecarFacts(path),
        ...(options.recordingStart === undefined ? {} : { recordingStart: options.recordingStart }),
      });
      sink.sync();
    } finally {
      sink.close();
    }
    source.close();
    try {
      chmodSync(temp, statSync(path).mode & 0o7777);
    } catch {
      // keeping the original permissions is a courtesy; the repaired file is readable either way
    }
    try {
      renameSync(temp, path);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot replace the file with its repaired copy', { file: path });
    }
    temp = undefined;
    syncDirectory(dirname(path));
    return report;
  } finally {
    source.close();
    if (temp !== undefined) rmSync(temp, { force: true });
  }
}

/** Makes the rename durable; not every platform can open a directory (Windows), which only costs durability there. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // see above
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * `Backend.salvage` for a `.vcap`: `rebuildVcap` from `source` into a new file `target` (fsynced); `source` is only
 * read. Per url: messages kept and known lost.
 */
export async function salvageVcap(
  source: string,
  target: string,
  codecs?: Codecs,
  options: SalvageOptions = {},
): Promise<SalvageResult> {
  const readable = new FileReadable(source);
  try {
    const sink = new FileWritable(target);
    let report: VcapFixReport;
    try {
      report = rebuildVcap(readable, sink, codecs ?? (await loadCodecs()), source, options.onProgress, {
        sidecar: readSidecarFacts(source),
        ...(options.recordingStart === undefined ? {} : { recordingStart: options.recordingStart }),
      });
      sink.sync();
    } finally {
      sink.close();
    }
    return {
      urls: report.channels.map((c) => ({
        url: c.topic,
        ...(c.action === undefined ? {} : { action: c.action }),
        recoveredFrames: c.keptMessages,
        recoveredBytes: c.keptBytes,
        lostFrames: c.lostMessages,
        lostBytes: c.lostBytes,
      })),
      lostBytes: report.droppedBytes,
      problems: report.problems,
    };
  } finally {
    readable.close();
  }
}
