import { statSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';

/**
 * A `.vdb` must be a regular file before SQLite opens it: SQLite's open() of a FIFO blocks until a writer appears
 * (forever, for a planted one), and a device reads without end. Missing is `NOT_FOUND`, anything else that is not a
 * regular file `INVALID_ARGUMENT`.
 */
export function assertRegularVdb(path: string): void {
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch (error) {
    throw new BagError('NOT_FOUND', 'no such .vdb file', { file: path, cause: error });
  }
  if (!stats.isFile()) {
    const kind = stats.isDirectory() ? 'a directory' : stats.isFIFO() ? 'a FIFO' : 'not a regular file';
    throw new BagError('INVALID_ARGUMENT', `the .vdb is ${kind}, not a regular file: refused`, { file: path });
  }
}
