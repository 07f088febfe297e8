import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Finds `shared/fixtures` (the steering repo's fixtures, laid beside the checkout as `../shared`). CI lays it next to
 * a fresh clone, developers have it at `/work/shared`; `VLINK_SHARED_DIR` overrides both.
 */
export function sharedFixturesDir(): string {
  const fromEnv = process.env['VLINK_SHARED_DIR'];
  if (fromEnv) return join(fromEnv, 'fixtures');
  let dir = resolve(process.cwd());
  for (;;) {
    const candidate = join(dir, 'shared', 'fixtures');
    if (existsSync(candidate)) return candidate;
    const sibling = join(dirname(dir), 'shared', 'fixtures');
    if (existsSync(sibling)) return sibling;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('shared/fixtures not found; set VLINK_SHARED_DIR');
    dir = parent;
  }
}
