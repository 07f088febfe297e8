import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType, SchemaType, type Frame } from '@vlink/bag';
import { CLI, cliArgs, cliEnv, SLOW, tempDir, writeBag } from './testing/harness.js';

// Bun exited with most of a large output still queued for a pipe (`info --json` cut at 64 KiB, exit 0): the reader
// here only starts reading once the CLI has had time to write everything and exit, as a slow consumer would.

const tmp = tempDir();
const bag = tmp.path('many-urls.vcap');
const URLS = 10_000;

before(async () => {
  const frames: Frame[] = [];
  for (let i = 0; i < URLS; i++) {
    const data = new TextEncoder().encode(`{"i":${i}}`);
    frames.push({
      timestamp: i,
      url: `/many/${i}`,
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      data,
    });
  }
  await writeBag(bag, { frames });
});
after(() => tmp.cleanup());

/** Runs the CLI and reads its stdout only after `delayMs`, then as fast as it comes. */
function runWithSlowReader(args: string[], delayMs: number): Promise<{ code: number | null; stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI[0], cliArgs(args), { env: cliEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.pause();
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const timer = setTimeout(() => child.stdout.resume(), delayMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out) });
    });
  });
}

describe('large output into a slow pipe', () => {
  test('info --json (over 1 MiB) arrives whole before the CLI exits', SLOW, async () => {
    const { code, stdout } = await runWithSlowReader(['info', bag, '--json'], 1500);
    assert.equal(code, 0);
    assert.ok(stdout.length > 1024 * 1024, `only ${stdout.length} bytes`);
    const summary = JSON.parse(stdout.toString('utf8')) as { urls: unknown[] };
    assert.equal(summary.urls.length, URLS);
  });

  test('check -l, written at once, arrives whole too', SLOW, async () => {
    const { code, stdout } = await runWithSlowReader(['check', bag, '-l'], 1500);
    assert.equal(code, 0);
    const text = stdout.toString('utf8');
    assert.match(text, /^.*many-urls\.vcap: ok; /);
    assert.equal(text.match(/^ {2}\/many\/\d+ /gm)?.length, URLS);
    assert.match(text, new RegExp(`^ {2}/many/${URLS - 1} .*\\n$`, 'm'));
  });

  test('stdout shared with the process that started the CLI stays open for it after the CLI exits', SLOW, async () => {
    // A script starting `vlink-bag serve` and writing on: the CLI inherits its stdout (a socket when the script's own
    // parent spawned it with pipes), and ending it there shut the socket down for the script too (SIGPIPE, exit 1).
    const command = [CLI[0], ...cliArgs(['--version'])].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const shell = spawn('sh', ['-c', `${command}; echo after the cli`], {
        env: cliEnv(),
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const out: Buffer[] = [];
      shell.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      shell.on('error', reject);
      shell.on('close', (exit) => resolve({ code: exit, stdout: Buffer.concat(out).toString('utf8') }));
    });
    assert.equal(code, 0);
    assert.match(stdout, /after the cli\n$/);
  });
});
