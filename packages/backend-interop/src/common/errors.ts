import { BagError } from '@vlink/bag-core';

/** `CORRUPT_FILE` at an offset: bytes that do not parse as the format says they must. */
export function corrupt(message: string, file: string, offset?: number, cause?: unknown): BagError {
  return new BagError('CORRUPT_FILE', message, {
    file,
    ...(offset === undefined ? {} : { offset }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Anything a parser threw (RangeError of a DataView, a library's Error) as `CORRUPT_FILE`; BagErrors pass through. */
export function asCorrupt(error: unknown, message: string, file: string, offset?: number): BagError {
  return BagError.wrap(error, 'CORRUPT_FILE', message, { file, ...(offset === undefined ? {} : { offset }) });
}

/**
 * A damaged file (truncated, a bad index) opened without `tryToFix`: the error names what is wrong and how much can
 * still be read, so nothing is dropped silently.
 */
export function damaged(file: string, what: string, readable: string): BagError {
  return new BagError('CORRUPT_FILE', `${what}; open with tryToFix to read ${readable}`, { file });
}

/** The writer side of a read-only backend. */
export function readOnly(name: string, path: string): Promise<never> {
  return Promise.reject(
    new BagError('NOT_SUPPORTED', `${name} files are read-only here: write a .vdb or .vcap instead`, { file: path }),
  );
}
