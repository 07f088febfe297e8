import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturePath } from '@vlink/fixtures';
import { test } from '@vlink/fixtures/test';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const fixture = fixturePath('test', 'after-skip.fixture.test.js');

/** The command that runs one test file under the runtime running this suite. */
function runnerFor(file: string): [string, string[]] {
  if (process.versions.bun) return [process.execPath, ['test', `./${relative(repoRoot, file)}`]];
  if ('Deno' in globalThis) return [process.execPath, ['test', '-A', '--no-check', file]];
  return [process.execPath, ['--test', file]];
}

test("a file's top-level after() runs although one of its tests is skipped (cleanup of temporary folders)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-after-'));
  try {
    const mark = join(dir, 'mark');
    const [command, args] = runnerFor(fixture);
    // NODE_TEST_CONTEXT would make the child `node --test` believe it is a file of this run and skip its file.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const run = spawnSync(command, args, {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...env, VLINK_AFTER_MARK: mark, NO_COLOR: '1' },
    });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(existsSync(mark), 'the after hook ran');
    assert.equal(readFileSync(mark, 'utf8'), 'after ran\n', 'once');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
