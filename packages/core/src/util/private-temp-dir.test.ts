import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from '@vlink/fixtures/test';
import { OWNER_FILE, privateTempDir, sweepAbandonedTempDirs } from './private-temp-dir.js';

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
  if (body.includes('SIGKILL')) assert.equal(run.signal, 'SIGKILL', run.stderr);
  else assert.equal(run.status, body.includes('exit(3)') ? 3 : 0, run.stderr);
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

  test('a folder its process did not live to remove (kill -9) is swept by the next process, and only such a folder', () => {
    const tmp = mkdtempSync(join(root, 'tmp-'));
    const killed = runChild(
      tmp,
      `await import('node:fs').then((fs) => fs.writeFileSync(dir.path + '/copy', 'x'));\nprocess.kill(process.pid, 'SIGKILL');`,
    );
    assert.ok(existsSync(join(killed, 'copy')), 'a kill -9 runs no cleanup');
    assert.match(readFileSync(join(killed, OWNER_FILE), 'utf8'), new RegExp(`^${hostname()} \\d+\\n$`));
    // Left alone: a folder of this process, one of another host, one of a process that lives, one without an owner.
    const keep = (name: string, owner?: string) => {
      mkdirSync(join(tmp, name));
      if (owner !== undefined) writeFileSync(join(tmp, name, OWNER_FILE), owner);
      return join(tmp, name);
    };
    const kept = [
      keep('vlink-mine-1', `${hostname()} ${process.pid}\n`),
      keep('vlink-elsewhere-1', `another-host-${hostname()} 999999999\n`),
      keep('vlink-pid-one-1', `${hostname()} 1\n`),
      keep('vlink-unmarked-1'),
      keep('other-1', `${hostname()} 999999999\n`),
    ];
    assert.deepEqual(sweepAbandonedTempDirs(tmp), [killed]);
    assert.equal(existsSync(killed), false);
    for (const path of kept) assert.ok(existsSync(path), path);
  });
});
