import { closeSync, fsyncSync, openSync } from 'node:fs';

/** Flushes a finished file to disk (the SQLite drivers close without `fsync` under `synchronous = OFF`). */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
