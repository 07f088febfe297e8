import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The command that runs one test file under the runtime running this suite. */
function runnerFor(file: string): [string, string[]] {
  if (process.versions.bun) return [process.execPath, ['test', `./${relative(repoRoot, file)}`]];
  if ('Deno' in globalThis) return [process.execPath, ['test', '-A', '--no-check', file]];
  return [process.execPath, ['--test', file]];
}

/** Runs the test file `file` in a child process of this runtime's test runner, with `env` added (60 s at most). */
export function runTestFile(file: string, env: Record<string, string>): SpawnSyncReturns<string> {
  const [command, args] = runnerFor(file);
  // NODE_TEST_CONTEXT would make the child `node --test` believe it is a file of this run and skip its file.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  return spawnSync(command, args, {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...inherited, ...env, NO_COLOR: '1' },
  });
}
