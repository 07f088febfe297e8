import { checkBagPath } from '../backend/bag-path.js';
import { guardFile } from '../backend/file-guard.js';
import { backendFor, extensionOf } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { repairFile } from './repair-file.js';
import { repairSplit } from './repair-split.js';
import type { RepairOptions, RepairReport } from './repair-report.js';
import { repairFs } from './repair-fs.js';

/**
 * Repairs a bag without ever putting its data at risk (beyond VLink's in-place `fix()`): the backend salvages
 * everything it can read into a new file next to the destination; that copy is fsynced and must pass a full check;
 * only then does it replace the input (the original kept as `<path>.bak`, unless `backup: false`) or land at
 * `output` (the input untouched). A copy holding fewer frames than a reader can read from the input never replaces
 * it (`CORRUPT_DATA`, nothing changed). Split recordings (`.vdbx`, `.vcapx`) are repaired segment by segment and get a
 * manifest computed from the repaired segments. The report says what was recovered and lost, per url.
 */
export async function repairBag(path: string, options: RepairOptions = {}): Promise<RepairReport> {
  checkBagPath(path);
  const fs = await repairFs();
  const ext = extensionOf(path);
  if (ext.endsWith('x')) {
    if (!fs.exists(path)) throw new BagError('NOT_FOUND', 'no such bag', { file: path });
    return repairSplit(path, options, fs);
  }
  // A directory, FIFO or device is refused as every reader refuses it, before anything is read or written.
  await guardFile(path);
  return repairFile(path, options, fs);
}

/**
 * Whether `repairBag` can repair a bag of this name: a split recording, or a file whose backend salvages. Read-only
 * formats (ROS 1 and 2, Apollo, ULog, a plain `.mcap`) are mended by copying what their readers read with `tryToFix`.
 */
export function canRepair(path: string): boolean {
  if (extensionOf(path).endsWith('x')) return true;
  try {
    return backendFor(path).salvage !== undefined;
  } catch {
    return false;
  }
}
