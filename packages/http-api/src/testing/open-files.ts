import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * How many file descriptors of this process are open on `path`, read from `/proc/self/fd` (Linux): worker threads
 * share the process's descriptors, so this sees a reader a bag worker still holds. Undefined where there is no
 * `/proc` (the caller skips its check).
 */
export function openDescriptors(path: string): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return undefined;
  }
  const real = realpathSync(path);
  let n = 0;
  for (const fd of entries) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === real) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}
