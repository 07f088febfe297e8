import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type RuntimeName = 'node' | 'bun' | 'deno';

/** The runtime running this code. */
export function currentRuntime(): RuntimeName {
  if (typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined') return 'deno';
  if (typeof process !== 'undefined' && process.versions?.['bun']) return 'bun';
  return 'node';
}

/** The monorepo root (this file is at packages/testing/{src,dist-test}/crash/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** A compiled script next to this module (`dist-test/crash/<name>.js`). */
export function crashScript(name: string): string {
  return join(dirname(fileURLToPath(import.meta.url)), `${name}.js`);
}

/**
 * The command that runs `script` with the same runtime as this process: `process.execPath` for Node and Bun, and
 * `deno run -A --no-check --node-modules-dir=manual` for Deno (the way the test suite itself runs there).
 */
export function childCommand(
  script: string,
  args: string[],
  runtime: RuntimeName = currentRuntime(),
): [string, string[]] {
  if (runtime === 'deno')
    return [process.execPath, ['run', '-A', '--no-check', '--node-modules-dir=manual', script, ...args]];
  return [process.execPath, [script, ...args]];
}
