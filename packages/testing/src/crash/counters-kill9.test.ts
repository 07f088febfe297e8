import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { childCommand, crashScript, repoRoot } from './runtime.js';

// Counters by cause are stored at every metadata refresh, not only at close: a child counts application causes, keeps
// recording for a while, and is killed with SIGKILL; the bag, opened with tryToFix, holds the counts.

const dir = mkdtempSync(join(tmpdir(), 'vlink-counters-kill9-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function killAfterCounting(path: string, mode: 'sync' | 'worker'): Promise<void> {
  const [bin, args] = childCommand(crashScript('counters-child'), [path, mode]);
  const child = spawn(bin, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const counted = new Promise<boolean>((resolve) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      if (out.includes('counted\n')) resolve(true);
    });
    void closed.then(() => resolve(false));
  });
  // A timer cleared at once: left running, it kept the test process alive for 30 s after the last case.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 30_000)));
  const ok = await Promise.race([counted, timeout]);
  clearTimeout(timer);
  if (ok) await sleep(3_500); // a hand-over (≤ 1 s), a refresh (≤ 1 s) and a commit later
  child.kill('SIGKILL');
  await closed;
  assert.ok(ok, `the child did not count: ${stderr.trim()}`);
}

const cases = ['.vdb', '.vcap', '.vdbx', '.vcapx'].flatMap((ext) =>
  (['worker', 'sync'] as const).map((mode) => ({ ext, mode, path: join(dir, `${mode}${ext}`) })),
);
let killings: Map<string, Promise<void>> | undefined;

/**
 * The child of `path` counted and was killed. The eight children run at once, started by the first test: most of a
 * case is waiting (the 3.5 s above), and each child records 500 frames of 1 KiB a second, a few % of a core; one after
 * the other the eight took 37 s on Node. A failure stays its own case's.
 */
function killed(path: string): Promise<void> {
  killings ??= new Map(
    cases.map((c) => {
      const killing = killAfterCounting(c.path, c.mode);
      killing.catch(() => {}); // its test reports it; until then it is not an unhandled rejection
      return [c.path, killing];
    }),
  );
  return killings.get(path)!;
}

describe('counters by cause survive kill -9 (the last metadata refresh)', () => {
  for (const { ext, mode, path } of cases) {
    test(`${ext} ${mode}`, { timeout: 60_000 }, async () => {
      await killed(path);
      const reader = await BagReader.create(path, { tryToFix: true });
      try {
        assert.equal(reader.getInfo().hasCompleted, false);
        assert.deepEqual(reader.getInfo().counters, { '/a': { missedSlot: 7 }, '/b': { submitFailed: 3 } });
      } finally {
        reader.close();
      }
    });
  }
});
