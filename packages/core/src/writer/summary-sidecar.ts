import { summarizeBag, summaryPath, writeSummaryFile } from '../analysis/summary.js';
import { BagError } from '../errors.js';
import { BagReader } from '../reader/bag-reader.js';

/**
 * Writes the sidecar summary (`<path>.json`) of a closed recording, read back once from `localPath` (the file, or the
 * staging copy of a url); the writer's failure, if any, is listed in its errors. Returns the error instead of throwing
 * it: the recording itself is complete, so a summary that cannot be made is reported, never a failed close.
 */
export async function writeSummarySidecar(
  localPath: string,
  path: string,
  lastError: BagError | undefined,
): Promise<BagError | undefined> {
  const errors = lastError ? [`${lastError.code}: ${lastError.message}`] : [];
  let reader: BagReader | undefined;
  try {
    reader = await BagReader.create(localPath, { tryToFix: true });
    writeSummaryFile(localPath, await summarizeBag(reader, { errors }));
    return undefined;
  } catch (error) {
    return BagError.wrap(error, 'IO_ERROR', 'cannot write the summary sidecar', { file: summaryPath(path) });
  } finally {
    reader?.close();
  }
}
