import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real S3-compatible server on loopback for the tests: moto's standalone server (`pip install "moto[server]"`), found
 * as `$VLINK_MOTO_SERVER`, in the Python client's test venv (`clients/python/.venv`, where `scripts/test-python.sh`
 * installs it with the `test` extra) or on PATH. `start()` answers why not when it cannot start one.
 */
export class MotoServer {
  private constructor(
    readonly endpoint: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<MotoServer | string> {
    const command = findMotoServer();
    if (!command) return 'moto_server not found: pip install "moto[server]" (scripts/test-python.sh installs it)';
    const port = await freePort();
    const child = spawn(command, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const endpoint = `http://127.0.0.1:${port}`;
    const failed = new Promise<string>((resolve) => {
      child.on('error', (error) => resolve(`moto_server did not start: ${error.message}`));
      child.on('exit', (code) => resolve(`moto_server exited with ${code}`));
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const problem = await Promise.race([failed, sleep(200).then(() => undefined)]);
      if (problem) return problem;
      try {
        await fetch(`${endpoint}/moto-api/`);
        return new MotoServer(endpoint, child);
      } catch {
        // not listening yet
      }
    }
    child.kill('SIGKILL');
    return 'moto_server did not answer within 30 s';
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

function findMotoServer(): string | undefined {
  const explicit = process.env['VLINK_MOTO_SERVER'];
  if (explicit) return explicit;
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
  const venv = join(root, 'clients/python/.venv/bin/moto_server');
  if (existsSync(venv)) return venv;
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'moto_server'))) return join(dir, 'moto_server');
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
