import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { baseDigests } from './fuzz-bases.js';
import { childCommand, crashScript, repoRoot } from './runtime.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-fuzz-bases-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the fuzz bases', () => {
  test('are the same bytes whichever process builds them (a --case replay mutates what the runner did)', async () => {
    const here = await baseDigests(dir, (bytes) => createHash('sha256').update(bytes).digest('hex'));
    const [command, args] = childCommand(crashScript('base-digest-child'), []);
    const child = spawnSync(command, args, { encoding: 'utf8', cwd: repoRoot, timeout: 120_000 });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(Object.keys(here).length >= 10, Object.keys(here).join(', '));
    assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)!), here);
  });
});
