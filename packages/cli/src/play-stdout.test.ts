import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from '@vlink/fixtures/test';
import { ActionType, type Frame, SchemaType } from '@vlink/bag';
import { CLI, cliArgs, cliEnv, SLOW, tempDir, writeBag } from './testing/harness.js';

// `play --stdout` replays in the recorded timing: a reader of the pipe must see each frame at its replay time, not
// in 64 KiB bursts (the batching `cat` uses), and a looping replay of a small bag must show output at all.

const tmp = tempDir();
const bag = tmp.path('paced.vdb');
before(async () => {
  // 21 small frames 50 ms apart: one second, about 3 KiB of NDJSON.
  const frames: Frame[] = Array.from({ length: 21 }, (_, i) => ({
    timestamp: i * 50_000,
    url: '/tick',
    data: new TextEncoder().encode(`{"i":${i}}`),
    serType: 'json',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  }));
  await writeBag(bag, { frames });
});
after(() => tmp.cleanup());

/**
 * Runs `vlink-bag play …args` with stdout on a pipe; resolves with the arrival time (ms since the start) of each
 * line, once `stopAfter` lines arrived (the player is then killed) or the player ended.
 */
function arrivals(args: readonly string[], stopAfter = Number.POSITIVE_INFINITY, timeoutMs = 20_000) {
  return new Promise<{ times: number[]; code: number | null; stderr: string }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(CLI[0], cliArgs(['play', ...args]), { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const times: number[] = [];
    let stderr = '';
    let rest = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`play ${args.join(' ')}: ${times.length} lines in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      const now = performance.now() - started;
      rest += chunk.toString();
      const lines = rest.split('\n');
      rest = lines.pop()!;
      for (let i = 0; i < lines.length; i++) times.push(now);
      if (times.length >= stopAfter) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ times, code, stderr });
    });
  });
}

test(
  'play --stdout into a pipe: each frame arrives at its replay time, not in one burst at the end',
  SLOW,
  async () => {
    const { times, code, stderr } = await arrivals([bag, '--stdout', '-q']);
    assert.equal(code, 0, stderr);
    assert.equal(times.length, 21);
    // The replay spans a second; a writer that batches to 64 KiB hands all 21 lines over at once when it ends.
    const span = times.at(-1)! - times[0]!;
    assert.ok(span >= 600, `lines arrived over ${Math.round(span)} ms`);
    const half = times.filter((t) => t < times[0]! + span / 2).length;
    assert.ok(half >= 5 && half <= 16, `${half} of 21 lines in the first half of the replay`);
  },
);

test('play -l --stdout of a small bag shows its frames while it loops', SLOW, async () => {
  const { times } = await arrivals([bag, '-l', '--stdout', '-q'], 25, 15_000);
  assert.ok(times.length >= 25, 'the second pass has begun, and its lines are out');
  assert.ok(times[0]! < 8_000, `the first line after ${Math.round(times[0]!)} ms`);
});
