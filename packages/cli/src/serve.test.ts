import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { fileURLToPath } from 'node:url';
import { BIN, CLI, cliArgs, cliEnv, runCli, tempDir, writeBag, SLOW } from './testing/harness.js';

const tmp = tempDir();

before(() => writeBag(tmp.path('drive.vdb')));
after(() => tmp.cleanup());

describe('serve', () => {
  test('serves a directory with @vlink/bag-server until SIGINT; --allow-origin repeats', SLOW, async () => {
    const origins = ['--allow-origin', 'http://a.example', '--allow-origin', 'http://b.example'];
    const child = spawn(CLI[0], cliArgs(['serve', tmp.dir, '--port', '0', ...origins]), {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /on (http:\/\/127\.0\.0\.1:\d+) /.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.once('close', () => reject(new Error(`serve exited: ${stderr}`)));
    });
    const health = await fetch(`${url}/v1/health`);
    assert.equal(health.status, 200);
    const list = (await (await fetch(`${url}/v1/bags`)).json()) as unknown;
    assert.match(JSON.stringify(list), /drive\.vdb/);
    // Both listed origins pass the server's Origin check; any other is refused.
    const from = async (origin: string) => {
      const res = await fetch(`${url}/v1/health`, { headers: { origin } });
      await res.body?.cancel();
      return res.status;
    };
    assert.deepEqual(
      [await from('http://a.example'), await from('http://b.example'), await from('http://c.example')],
      [200, 200, 403],
    );
    child.kill('SIGINT');
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    // Deno's child_process reports a child that handled SIGINT and exited 0 as killed by SIGINT.
    const isDeno = (globalThis as { Deno?: unknown }).Deno !== undefined;
    assert.ok(code === 0 || (isDeno && code === null && signal === 'SIGINT'), `exit ${code} ${signal}: ${stderr}`);
    assert.equal(stderr, '');
  });

  test('refuses a missing directory and a public host without a token', SLOW, async () => {
    const [missing, open] = await Promise.all([
      runCli(['serve', tmp.path('nope')]),
      runCli(['serve', tmp.dir, '--host', '0.0.0.0', '--port', '0']),
    ]);
    assert.deepEqual([missing.code, missing.stderr], [1, `vlink-bag serve: ${tmp.path('nope')}: no such directory\n`]);
    assert.equal(open.code, 1);
    assert.match(open.stderr, /^vlink-bag serve: .*refusing to listen on 0\.0\.0\.0 without a token/);
  });
});

describe('the bin', () => {
  const bun = fileURLToPath(new URL('../../../node_modules/.bin/bun', import.meta.url));
  test('runs under Bun too', { ...SLOW, skip: !existsSync(bun) && 'bun is not installed' }, () => {
    const result = spawnSync(bun, [BIN, 'info', tmp.path('drive.vdb'), '--json'], { env: cliEnv(), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { messageCount: number }).messageCount, 200);
  });
});
