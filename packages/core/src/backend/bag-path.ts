import { BagError } from '../errors.js';

/**
 * Refuses a bag path no file can have: not a string, empty, or holding a NUL character. A NUL ends a C string, so
 * SQLite opened the part before it: `BagWriter.create('a\0b.vdb')` wrote a file named `a` and said nothing.
 */
export function checkBagPath(path: unknown): asserts path is string {
  if (typeof path !== 'string' || path.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'bag path must not be empty');
  if (path.includes('\0'))
    throw new BagError('INVALID_ARGUMENT', 'bag path must not contain a NUL character', {
      file: path.replaceAll('\0', '\\0'),
    });
}
