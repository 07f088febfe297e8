import { BagError } from '../errors.js';

/**
 * `BagReader.create`'s options as plain JavaScript can pass them: `null` failed with a TypeError, a string `readOnly`
 * or `tryToFix` was taken for true, a number `confineTo` came back as an IO_ERROR about a "path" argument.
 */
export function checkReaderOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null)
    throw new BagError(
      'INVALID_ARGUMENT',
      `reader options must be an object, not ${options === null ? 'null' : typeof options}`,
    );
  const { readOnly, tryToFix, verifyCrc, confineTo } = options as Record<string, unknown>;
  for (const [name, value] of [
    ['readOnly', readOnly],
    ['tryToFix', tryToFix],
    ['verifyCrc', verifyCrc],
  ] as const)
    if (value !== undefined && typeof value !== 'boolean')
      throw new BagError('INVALID_ARGUMENT', `reader option ${name} must be true or false`);
  if (confineTo !== undefined && (typeof confineTo !== 'string' || confineTo.length === 0))
    throw new BagError('INVALID_ARGUMENT', 'reader option confineTo must be a folder path');
}
