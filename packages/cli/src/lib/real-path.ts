import { realpathSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/**
 * The real path of a file or, when it does not exist yet, of its directory joined with its name: how the output guard
 * tells that two spellings (a symbolic link, `./x`, `../d/x`) name one file.
 */
export function realPathOf(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return resolve(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}
