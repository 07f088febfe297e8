import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temp dir for one test file; `cleanup()` removes it (call from `after`). */
export function tempDir(prefix: string): { dir: string; path(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `vlink-sqlite-${prefix}-`));
  let n = 0;
  return {
    dir,
    path: (name: string) => join(dir, `${n++}-${name}`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Bytes 0..n-1 modulo 251 (compressible enough, never all zero). */
export function pattern(n: number, seed = 0): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i + seed) % 251;
  return out;
}

/** Deterministic incompressible bytes (xorshift). */
export function noise(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed | 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
