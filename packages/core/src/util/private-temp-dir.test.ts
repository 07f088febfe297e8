import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from '@vlink/fixtures/test';
import { privateTempDir } from './private-temp-dir.js';

const root = mkdtempSync(join(tmpdir(), 'vlink-private-temp-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Runs `body` (after `dir` is made) as a script of its own under this runtime, with the temp directory `tmp`. */
function runChild(tmp: string, body: string): string {
  const module = fileURLToPath(new URL('./private-temp-dir.js', import.meta.url));
  const script = join(root, `child-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    script,
    `import { privateTempDir } from ${JSON.stringify(module)};
const dir = privateTempDir('vlink-child-');
console.log(dir.path);
${body}
`,
  );
  const deno = (globalThis as { Deno?: unknown }).Deno !== undefined;
  const run = spawnSync(process.execPath, deno ? ['run', '-A', script] : [script], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp },
  });
  assert.equal(run.status, body.includes('exit(3)') ? 3 : 0, run.stderr);
  return run.stdout.trim();
}

describe('privateTempDir', () => {
  test('remove() deletes the folder and what is in it, and may be called again', () => {
    const dir = privateTempDir('vlink-private-temp-test-');
    writeFileSync(join(dir.path, 'copy.vdb'), 'x');
    assert.ok(existsSync(join(dir.path, 'copy.vdb')));
    dir.remove();
    assert.equal(existsSync(dir.path), false);
    dir.remove();
  });

  for (const [how, body] of [
    ['the process ends by itself', ''],
    ['process.exit() is called', 'process.exit(3);'],
  ] as const) {
    test(`a folder nobody removed is gone once ${how}`, () => {
      const tmp = mkdtempSync(join(root, 'tmp-'));
      const made = runChild(
        tmp,
        `await import('node:fs').then((fs) => fs.writeFileSync(dir.path + '/copy', 'x'));\n${body}`,
      );
      assert.ok(made.startsWith(tmp), made);
      assert.equal(existsSync(made), false, `${made} is left`);
      assert.deepEqual(readdirSync(tmp), []);
    });
  }
});
