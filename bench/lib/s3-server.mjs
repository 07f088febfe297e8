// The S3 server of the S3 benchmarks: gofakes3 (bench/s3-server, Go, in memory) when Go is on PATH, else moto's
// server (as the tests use). On moto, every range request reads the whole object, so a full read by ranges is bound
// by moto, not by the reader: `--server moto` keeps that comparison available, the default is the faster server.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MotoServer } from '@vlink/fixtures/s3';

const here = dirname(fileURLToPath(import.meta.url));

/** `{ name, endpoint, stop() }`, or a string saying why no server could start. */
export async function startBenchS3Server(args) {
  const asked = args.includes('--server') ? args[args.indexOf('--server') + 1] : undefined;
  if (asked !== undefined && asked !== 'moto' && asked !== 'gofakes3')
    throw new Error(`--server ${asked}: expected moto or gofakes3`);
  if (asked !== 'moto') {
    const fake = await startGofakes3();
    if (typeof fake !== 'string' || asked === 'gofakes3') return fake;
  }
  const moto = await MotoServer.tryStart();
  return typeof moto === 'string' ? moto : { name: 'moto', endpoint: moto.endpoint, stop: () => moto.stop() };
}

async function startGofakes3() {
  const binary = join(here, '..', 'tmp', 's3-server', 'gofakes3');
  if (!existsSync(binary)) {
    try {
      mkdirSync(dirname(binary), { recursive: true });
      execFileSync('go', ['build', '-o', binary, '.'], { cwd: join(here, '..', 's3-server'), stdio: 'inherit' });
    } catch (error) {
      return `gofakes3 could not be built (${error.message}); Go is needed, or pass --server moto`;
    }
  }
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(binary, ['-addr', `127.0.0.1:${port}`], { stdio: 'ignore' });
  let exited;
  child.on('exit', (code) => (exited = `gofakes3 exited with ${code}`));
  child.on('error', (error) => (exited = `gofakes3 did not start: ${error.message}`));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) return exited;
    try {
      await fetch(`${endpoint}/`);
      return { name: 'gofakes3', endpoint, stop: () => child.kill('SIGTERM') };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  return 'gofakes3 did not answer within 10 s';
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
