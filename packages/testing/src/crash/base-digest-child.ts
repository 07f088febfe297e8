// Prints the SHA-256 of every base file of the fuzz formats, built by this process (fuzz-bases.test.ts compares them
// with its own: a case replayed with `--case` by another process must get the bytes the runner mutated).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseDigests } from './fuzz-bases.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-base-digest-'));
try {
  console.log(JSON.stringify(await baseDigests(dir, (bytes) => createHash('sha256').update(bytes).digest('hex'))));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
