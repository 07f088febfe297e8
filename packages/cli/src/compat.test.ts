import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType } from '@vlink/bag';
import { COMPAT_ROWS } from './lib/compat.js';
import {
  CLI,
  cliArgs,
  cliEnv,
  fixtureFrames,
  ndjson,
  runCli,
  SLOW,
  START_MS,
  tempDir,
  writeBag,
  type CliResult,
} from './testing/harness.js';
import { withReader } from './testing/sample-bags.js';

/**
 * Runs every example of the compatibility table (lib/compat.ts, rendered into the README and the docs) and checks
 * the behaviour its last column promises. Expected frames are computed from the fixture recording, not typed in.
 */
const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
const later = tmp.path('later.vdb');
const pluginFile = tmp.path('plugin.mjs');
const schemaFile = tmp.path('schemas.mjs');
const frames = fixtureFrames();
let outputs = 0;

before(async () => {
  await writeBag(vdb);
  await writeBag(later, { startMs: START_MS + 1000 });
  writeFileSync(
    pluginFile,
    `export default ({ BagPluginInterface }) => new (class extends BagPluginInterface {
  convertUrlMeta(url) { return url === '/lidar' ? null : url === '/imu' ? '/imu2' : url; }
})();\n`,
  );
  writeFileSync(
    schemaFile,
    `export default [{ name: 'extra.Thing', encoding: 'jsonschema', schemaType: 1, data: new Uint8Array([123, 125]) }];\n`,
  );
});
after(() => tmp.cleanup());

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** Apollo's datetime spelling, local time: `2026-03-17-10:00:01.123`. */
function apolloLocal(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}-${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}
const utcText = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** The table's placeholders made real: fixture bags, fresh outputs, modules, datetimes. */
function materialize(args: readonly string[]): { args: string[]; out: string } {
  const out = tmp.path(`out-${++outputs}`);
  const map: Record<string, string> = {
    'drive.vdb': vdb,
    'later.vdb': later,
    'out.vdb': `${out}.vdb`,
    'out.vcap': `${out}.vcap`,
    'plugin.mjs': pluginFile,
    'schemas.mjs': schemaFile,
    '<start+1s local>': apolloLocal(START_MS + 1000),
    '<start+1s utc>': utcText(START_MS + 1000),
    '<start+1.5s utc>': utcText(START_MS + 1500),
  };
  return { args: args.map((arg) => map[arg] ?? arg), out };
}

/** `(time url action …)` of `cat --format text` lines, as (µs, url, action). */
function textFrames(stdout: string): Array<[number, string, string]> {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [time, url, action] = line.split(/ {2}/);
      return [Math.round(Number.parseFloat(time!) * 1e6), url!, action!];
    });
}
const ACTION = ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'];
const expected = (keep: (f: (typeof frames)[number]) => boolean) =>
  frames.filter(keep).map((f): [number, string, string] => [f.timestamp, f.url, ACTION[f.actionType]!]);
const inWindow = (from: number, to: number) => (f: { timestamp: number }) => f.timestamp >= from && f.timestamp <= to;

function usage(result: CliResult, pattern: RegExp): void {
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
}

type Check = (result: CliResult, out: string, args: string[]) => Promise<void> | void;

const CHECKS: Record<string, Check> = {
  urls: (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      textFrames(r.stdout),
      expected((f) => f.url === '/imu' || f.url === '/log'),
    );
  },
  skip: (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      textFrames(r.stdout),
      expected((f) => f.url !== '/lidar'),
    );
    assert.match(r.stderr, /warning: no url \/nope in this bag \(-k\)/);
  },
  filter: (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      textFrames(r.stdout),
      expected((f) => f.url === '/camera' || f.url === '/lidar'),
    );
  },
  actions: (r) => {
    assert.equal(r.code, 0, r.stderr);
    const keep = [ActionType.Subscribe, ActionType.ClientRequest];
    assert.deepEqual(
      textFrames(r.stdout),
      expected((f) => keep.includes(f.actionType)),
    );
  },
  'begin-datetime': (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(textFrames(r.stdout), expected(inWindow(1_000_000, 1_500_000)));
  },
  'rel-time': async (r) => {
    assert.equal(r.code, 0, r.stderr);
    const plain = await runCli(['cat', vdb, '-b', '1', '-e', '1.5']);
    assert.equal(r.stdout, plain.stdout);
    assert.equal(ndjson(r.stdout).length, expected(inWindow(1_000_000, 1_500_000)).length);
  },
  'utc-time-window': async (r) => {
    assert.equal(r.code, 0, r.stderr);
    const plain = await runCli(['cat', vdb, '-b', '1', '-e', '1.5']);
    assert.equal(r.stdout, plain.stdout);
  },
  'utc-time': (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Date Time: +${utcText(START_MS)} UTC$`, 'm'));
  },
  detail: (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /: ok; 200 frames read and decoded/);
    for (const url of new Set(frames.map((f) => f.url))) assert.match(r.stdout, new RegExp(`^ {2}${url} +`, 'm'), url);
  },
  gaps: (r) => {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Message Count: +200$/m);
    assert.match(r.stdout, /^Timing \(gaps > 1.5 × median interval\):$/m);
  },
  wait: (r) => usage(r, /-w\/--wait waits for a Foxglove client: add --serve/),
  'max-packet': (r) => {
    assert.equal(r.code, 0, r.stderr);
    const big = frames.filter((f) => f.data.byteLength > 0.1 * 1024 * 1024).length;
    assert.equal(big, 1, 'the fixture has one large frame');
    const summary = JSON.parse(r.stdout) as { frames: number; oversize: number };
    assert.deepEqual([summary.frames, summary.oversize], [frames.length - big, big]);
  },
  plugin: async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const got = await withReader(`${out}.vdb`, (reader) => [...reader.getInfo().urls.map((m) => [m.url, m.count])]);
    const want = new Map<string, number>();
    for (const f of frames) {
      if (f.url === '/lidar') continue;
      const url = f.url === '/imu' ? '/imu2' : f.url;
      want.set(url, (want.get(url) ?? 0) + 1);
    }
    assert.deepEqual(new Map(got as Array<[string, number]>), want);
  },
  'import-schema': async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const schemas = await withReader(`${out}.vdb`, (reader) => reader.getSchemas());
    const thing = schemas.find((s) => s.name === 'extra.Thing');
    assert.ok(thing, JSON.stringify(schemas.map((s) => s.name)));
    assert.deepEqual([...thing.data], [123, 125]);
    assert.ok(
      schemas.some((s) => s.name === 'test.Point'),
      'the source schema is kept',
    );
  },
  compress: async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const info = await withReader(`${out}.vcap`, (reader) => reader.getInfo());
    assert.match(info.compressionType.toLowerCase(), /zstd/);
    assert.equal(info.messageCount, frames.length);
  },
  'compress-level': (r) => usage(r, /--compress-level 4: Must set compress \[-p\]/),
  'invalid-time': (r) => usage(r, /Invalid time: -b\/--begin 50 s is past the end of the recording/),
  'record-all': async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const [recorded, original] = await Promise.all([runCli(['cat', `${out}.vdb`]), runCli(['cat', vdb])]);
    assert.equal(recorded.stdout, original.stdout);
  },
  'play-files': (r) => {
    assert.equal(r.code, 0, r.stderr);
    const lines = ndjson(r.stdout) as Array<{ timestamp: number; url: string }>;
    assert.equal(lines.length, frames.length * 2);
    // later.vdb starts 1 s after drive.vdb: its frames are 1 s later on the merged timeline.
    const want = [...frames.map((f) => f.timestamp), ...frames.map((f) => f.timestamp + 1_000_000)].sort(
      (a, b) => a - b,
    );
    const got = lines.map((l) => l.timestamp);
    for (let i = 1; i < got.length; i++) assert.ok(got[i]! > got[i - 1]!, 'strictly increasing');
    // Equal instants are moved 1 µs apart by the merge; every time is within 1 µs of a source time.
    for (const [i, t] of got.entries()) assert.ok(Math.abs(t - want[i]!) <= 1, `${t} vs ${want[i]}`);
  },
  'play-delay': async (r, _out, args) => {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(ndjson(r.stdout).length, frames.length);
    // Timed inside the delayed process, from its "Serving" line (written just before the delay starts) to its first
    // frame: comparing two whole CLI runs also timed their start, which varies by a second on a loaded 2-core machine.
    const delayed = args.map((arg, i) => (args[i - 1] === '-d' ? '2' : arg));
    const gap = await readyToFirstFrame([...delayed, '--serve=127.0.0.1:0', '--no-wait']);
    // 2 s of delay; the margin is for the test's own event loop reading the "Serving" line late.
    assert.ok(gap >= 1500, `-d 2: the first frame came ${gap} ms after the server was ready`);
  },
  'play-loop': () => {
    // checked by a streaming run below (the example never ends by itself)
  },
  split: async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const cat = await runCli(['cat', `${out}.vdb`, '--format', 'text']);
    assert.deepEqual(
      textFrames(cat.stdout),
      expected((f) => f.url === '/imu' && inWindow(1_000_000, 1_500_000)(f)),
    );
  },
  recover: async (r, out) => {
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { frames: number; lossless: boolean; output: string };
    assert.deepEqual([report.frames, report.lossless, report.output], [frames.length, true, `${out}.vdb`]);
    const [a, b] = await Promise.all([runCli(['cat', `${out}.vdb`]), runCli(['cat', vdb])]);
    assert.equal(a.stdout, b.stdout);
  },
  'fix-y': (r) => usage(r, /-y is not accepted: .*--rebuild.*--yes/),
  'play-no-output': (r) => usage(r, /nothing to play to: .*--stdout.*--serve/),
};

/** Milliseconds from a `play --serve` run's "Serving …" line on stderr to its first NDJSON frame on stdout. */
async function readyToFirstFrame(args: string[]): Promise<number> {
  const child = spawn(CLI[0], cliArgs(args), { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let ready: number | undefined;
  return await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out; stderr: ${stderr}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (ready === undefined && stderr.includes('Serving foxglove.websocket.v1')) ready = Date.now();
    });
    child.stdout.once('data', () => {
      clearTimeout(timer);
      if (ready === undefined) reject(new Error(`a frame came before the "Serving" line; stderr: ${stderr}`));
      else resolve(Date.now() - ready);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`ended with ${code} before its first frame; stderr: ${stderr}`));
    });
  }).finally(() => child.kill('SIGKILL'));
}

describe('compatibility table: every VLink and Apollo example behaves as documented', () => {
  test('every row with an example has a check, and every check a row', () => {
    const withExample = COMPAT_ROWS.filter((row) => row.example).map((row) => row.id);
    assert.deepEqual(withExample.sort(), Object.keys(CHECKS).sort());
    for (const row of COMPAT_ROWS) assert.ok(!row.example || row.behaviour, `${row.id} documents its behaviour`);
  });

  for (const row of COMPAT_ROWS) {
    if (!row.example || row.id === 'play-loop') continue;
    test(`${row.flag}: vlink-bag ${row.example.join(' ')} → ${row.behaviour}`, SLOW, async () => {
      const { args, out } = materialize(row.example!);
      let input: string | undefined;
      if (args[0] === 'record') input = (await runCli(['cat', vdb])).stdout;
      const result = await runCli(args, input === undefined ? {} : { input });
      await CHECKS[row.id]!(result, out, args);
    });
  }

  test('`play --plugin` binds a read plugin: its url remap and drops apply to what is played', SLOW, async () => {
    const r = await runCli(['play', vdb, '--plugin', pluginFile, '--stdout', '--force-delay', '0']);
    assert.equal(r.code, 0, r.stderr);
    const got = ndjson(r.stdout).map((line) => [line['timestamp'], line['url']]);
    const want = frames.filter((f) => f.url !== '/lidar').map((f) => [f.timestamp, f.url === '/imu' ? '/imu2' : f.url]);
    assert.deepEqual(got, want);
  });

  test('`--plugin` that is not a plugin fails with one line', SLOW, async () => {
    const r = await runCli(['clone', vdb, tmp.path('never.vdb'), '--plugin', schemaFile]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /--plugin: the default export is not a BagPluginInterface/);
  });

  test('`play -l` keeps playing after one pass', SLOW, async () => {
    const row = COMPAT_ROWS.find((r) => r.id === 'play-loop')!;
    const { args } = materialize(row.example!);
    const child = spawn(CLI[0], cliArgs(args), { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    const lines = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; got ${text.split('\n').length} lines`)), 30_000);
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const n = text.split('\n').length - 1;
        if (n > frames.length * 2) {
          clearTimeout(timer);
          resolve(n);
        }
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        reject(new Error(`ended with ${code} after ${text.split('\n').length - 1} lines`));
      });
    }).finally(() => child.kill('SIGKILL'));
    assert.ok(lines > frames.length * 2);
    const first = text.split('\n')[0]!;
    assert.equal(text.split('\n')[frames.length], first, 'the second pass starts with the first frame again');
  });
});
