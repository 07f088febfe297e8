import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, toBinary } from '@bufbuild/protobuf';
import { ActionType, BagWriter, SchemaType, type Frame } from '@vlink/bag';
import { pointDescriptor } from '@vlink/fixtures/protobuf';

export { pointDescriptor };

/**
 * Options for every CLI test: each spawns processes, which a loaded machine (or Bun's 5 s default) can make slow.
 */
export const SLOW = { timeout: 60_000 } as const;

/** The built CLI entry point. */
export const BIN = fileURLToPath(new URL('../bin.js', import.meta.url));

/**
 * The runtime the CLI runs under: the one running the tests, so the Bun and Deno runs of the suite test the CLI on
 * Bun (`bun bin.js`, what `bunx vlink-bag` runs) and on Deno (`deno run -A bin.js` over the installed node_modules),
 * not the Node CLI again. VLINK_CLI_RUNTIME=node|bun|deno overrides it.
 */
export const CLI_RUNTIME: 'node' | 'bun' | 'deno' =
  (process.env['VLINK_CLI_RUNTIME'] as 'node' | 'bun' | 'deno' | undefined) ??
  (process.versions['bun'] ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node');

/** The command and leading arguments that start the CLI under CLI_RUNTIME: `spawn(CLI[0], [...CLI[1], ...args])`. */
export const CLI: readonly [string, readonly string[]] =
  CLI_RUNTIME === 'bun'
    ? [process.versions['bun'] ? process.execPath : 'bun', [BIN]]
    : CLI_RUNTIME === 'deno'
      ? [
          'Deno' in globalThis ? process.execPath : 'deno',
          ['run', '-A', '--no-check', '--node-modules-dir=manual', BIN],
        ]
      : [process.versions['bun'] || 'Deno' in globalThis ? 'node' : process.execPath, [BIN]];

/** `spawn` arguments for `vlink-bag …args` under CLI_RUNTIME. */
export const cliArgs = (args: readonly string[]): string[] => [...CLI[1], ...args];

/** Recording start of the fixture bags (ms since epoch). */
export const START_MS = 1_773_712_800_123;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

/** Environment for the CLI under test: no tag from the caller's environment, no colours. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra };
  delete env['VLINK_BAG_TAG'];
  delete env['FORCE_COLOR'];
  return env;
}

/** Runs `vlink-bag …args` under CLI_RUNTIME (or `runtime`) to completion, optionally feeding `input` on stdin. */
export function runCli(
  args: readonly string[],
  options: { input?: string | Buffer; timeoutMs?: number; runtime?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [command, argv] = options.runtime ? [options.runtime, [BIN, ...args]] : [CLI[0], cliArgs(args)];
    const child = spawn(command, argv, { env: cliEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vlink-bag ${args.join(' ')} timed out; stderr: ${Buffer.concat(err).toString()}`));
    }, options.timeoutMs ?? 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes });
    });
    child.stdin.on('error', () => {
      // the CLI may exit before reading all its input (an error on an early line)
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Whether util-linux `script` is there to give the CLI a pseudo-terminal. */
export function hasScript(): boolean {
  return spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Runs the CLI on a pseudo-terminal through `script -qfec "<cmd>" /dev/null`: stdin, stdout and stderr are the
 * terminal, so the CLI draws its status line and reads keys. `send` types keys; `waitFor` waits for screen text.
 */
export class PtySession {
  private output = '';
  private readonly exited: Promise<number | null>;
  readonly child: ChildProcess;

  constructor(args: readonly string[]) {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [CLI[0], ...cliArgs(args)].map(quote).join(' ');
    this.child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: cliEnv({ COLUMNS: '200', LINES: '40' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  /** Everything the terminal showed so far. */
  get screen(): string {
    return this.output;
  }

  send(keys: string): void {
    this.child.stdin!.write(keys);
  }

  /** Waits until `pattern` appears in the output after position `from`; returns the index after the match. */
  async waitFor(pattern: RegExp, from = 0, timeoutMs = 8000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rest = this.output.slice(from);
      const match = pattern.exec(rest);
      if (match) return from + match.index + match[0].length;
      if (Date.now() > deadline) {
        this.kill();
        throw new Error(`timed out waiting for ${pattern}; screen:\n${JSON.stringify(this.output.slice(-2000))}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async exit(timeoutMs = 8000): Promise<number | null> {
    const timer = setTimeout(() => this.kill(), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
      this.child.stdin!.end();
    }
  }

  /** Ends the session (a failed wait must not leave a terminal open that keeps the test runner alive). */
  kill(): void {
    this.child.stdin!.end();
    this.child.kill('SIGKILL');
  }
}

/** A temporary directory, removed by `cleanup()`. */
export function tempDir(): { dir: string; path(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-cli-'));
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const text = (value: string) => new TextEncoder().encode(value);

/**
 * The fixture recording (about 2 s, 200 frames, 10 ms apart): `/camera` protobuf points, `/imu` JSON, `/log` text,
 * `/lidar` raw bytes recorded as `Sub` (one of them 256 KiB, one empty), `/rpc` request/response pairs, `/config`
 * Set/Get. Timestamps start at 20 ms, so the bag has a blank.
 */
export function fixtureFrames(): Frame[] {
  const { Point } = pointDescriptor();
  const frames: Frame[] = [];
  for (let i = 0; i < 200; i++) {
    const timestamp = 20_000 + i * 10_000;
    const base = { timestamp, actionType: ActionType.Publish };
    switch (i % 6) {
      case 0:
        frames.push({
          ...base,
          url: '/camera',
          serType: 'test.Point',
          schemaType: SchemaType.Protobuf,
          data: toBinary(Point, create(Point, { x: i + 0.5, y: -i, label: `p${i}` } as never)),
        });
        break;
      case 1:
        frames.push({
          ...base,
          url: '/imu',
          serType: 'json',
          schemaType: SchemaType.Raw,
          data: text(JSON.stringify({ i, ok: true })),
        });
        break;
      case 2:
        frames.push({
          ...base,
          url: '/log',
          serType: 'text',
          schemaType: SchemaType.Raw,
          data: text(`line ${i}, "quoted"`),
        });
        break;
      case 3: {
        const size = i === 3 ? 256 * 1024 : i === 9 ? 0 : 100 + i;
        const data = new Uint8Array(size);
        for (let k = 0; k < size; k++) data[k] = (k * 31 + i) & 0xff;
        frames.push({
          ...base,
          url: '/lidar',
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: ActionType.Subscribe,
          data,
        });
        break;
      }
      case 4:
        frames.push({
          ...base,
          url: '/rpc',
          serType: 'test.Req|test.Resp',
          schemaType: SchemaType.Protobuf,
          actionType: i % 12 === 4 ? ActionType.ClientRequest : ActionType.ClientResponse,
          data: new Uint8Array([i, 1, 2]),
        });
        break;
      default:
        frames.push({
          ...base,
          url: '/config',
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: i % 12 === 5 ? ActionType.Set : ActionType.Get,
          data: new Uint8Array([i]),
        });
    }
  }
  return frames;
}

/** Writes `frames` (default: the fixture recording, with the Point schema) to `path`. */
export async function writeBag(
  path: string,
  options: { frames?: Frame[]; startMs?: number; tag?: string; processName?: string; timezone?: number } = {},
): Promise<void> {
  const writer = await BagWriter.create(path, {
    syncMode: true,
    startTimestamp: options.startMs ?? START_MS,
    tagName: options.tag ?? 'fixture',
    ...(options.processName ? { processName: options.processName } : {}),
    ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
  });
  writer.pushSchema({
    name: 'test.Point',
    encoding: 'protobuf',
    schemaType: SchemaType.Protobuf,
    data: pointDescriptor().fds,
  });
  for (const frame of options.frames ?? fixtureFrames()) {
    if (writer.push(frame) < 0) throw new Error(`fixture frame refused: ${writer.stats().lastError?.message}`);
  }
  await writer.close();
}

/** Parses NDJSON output into objects. */
export function ndjson(textOut: string): Array<Record<string, unknown>> {
  return textOut
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A running `vlink-bag play … --serve=127.0.0.1:0`: its Foxglove WebSocket url, its exit, what it wrote to stderr. */
export interface PlayServe {
  url: string;
  /** Resolves with the exit code once the player has ended (it ends after its last pass). */
  exit: Promise<number | null>;
  stderr(): string;
  /** Sends SIGINT (Ctrl-C): the player stops and exits. */
  kill(): void;
}

/** Starts `vlink-bag play …args --serve=127.0.0.1:0` and waits for the line naming its Foxglove url. */
export async function startPlayServe(args: readonly string[]): Promise<PlayServe> {
  const child = spawn(CLI[0], cliArgs(['play', ...args, '--serve=127.0.0.1:0']), {
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /Serving foxglove\.websocket\.v1 on (ws:\/\/\S+)/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('close', () => reject(new Error(`play exited: ${stderr}`)));
  });
  return { url, exit, stderr: () => stderr, kill: () => child.kill('SIGINT') };
}
