import { BagError } from '@vlink/bag-core';
import { RecordCorruption } from './record-parser.js';

/** `CORRUPT_FILE` with the file and the absolute offset of the bad bytes. */
export function corrupt(message: string, file: string | undefined, offset: number, cause?: unknown): BagError {
  return new BagError('CORRUPT_FILE', message, {
    ...(file === undefined ? {} : { file }),
    offset,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Turns whatever a parse step threw into a `BagError`: a `RecordCorruption` (offset relative to the parsed buffer,
 * which starts at `base` in the file) becomes `CORRUPT_FILE` at the absolute offset; BagErrors pass through.
 */
export function asBagError(error: unknown, file: string | undefined, base: number, what: string): BagError {
  if (BagError.isInstance(error)) return error;
  if (error instanceof RecordCorruption) return corrupt(`${what}: ${error.message}`, file, base + error.at, error);
  return BagError.wrap(error, 'CORRUPT_FILE', what, { ...(file === undefined ? {} : { file }), offset: base });
}
