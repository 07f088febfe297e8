import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagReader, SchemaType } from '@vlink/bag';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { schemaLine } from './lib/ndjson.js';
import {
  CLI,
  cliArgs,
  cliEnv,
  hasScript,
  pointDescriptor,
  PtySession,
  runCli,
  SLOW,
  tempDir,
  writeBag,
} from './testing/harness.js';
import { RosbridgeTestServer } from './testing/rosbridge-server.js';

/**
 * The trigger daemon dumps the expected window for each way of triggering (a stdin line, SIGUSR1, HTTP and its
 * `trigger dump` client, a key), and `record --from rosbridge://` records a rosbridge-protocol server.
 */
const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
let dirs = 0;

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });
function validate(verb: string, value: unknown): void {
  const check = ajv.compile(JSON_SCHEMAS[verb]!);
  assert.ok(check(value), `${verb}: ${ajv.errorsText(check.errors)}: ${JSON.stringify(value)}`);
}

let early = '';
let late = '';
before(async () => {
  await writeBag(vdb);
  // Two batches of the fixture: the first 0.5 s and everything from 1.5 s on.
  [early, late] = await Promise.all([
    runCli(['cat', vdb, '-e', '0.5']).then((r) => r.stdout),
    runCli(['cat', vdb, '-b', '1.5']).then((r) => r.stdout),
  ]);
});
const daemons: Daemon[] = [];
after(() => {
  // A failed test leaves its daemon waiting for stdin: end them all.
  for (const daemon of daemons) daemon.child.kill('SIGKILL');
  tmp.cleanup();
});

const lines = (text: string) => text.split('\n').filter((line) => line !== '').length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function newDir(): string {
  const dir = tmp.path(`dumps-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

/** A daemon process and its stdout events as they come. */
class Daemon {
  readonly child: ChildProcessWithoutNullStreams;
  out = '';
  err = '';
  readonly exited: Promise<number | null>;
  constructor(args: string[]) {
    this.child = spawn(CLI[0], cliArgs(['trigger', ...args, '--json']), { env: cliEnv(), stdio: 'pipe' });
    this.child.stdout.on('data', (chunk: Buffer) => (this.out += chunk.toString('utf8')));
    this.child.stderr.on('data', (chunk: Buffer) => (this.err += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.on('close', resolve));
    daemons.push(this);
  }
  events(): Array<Record<string, unknown>> {
    return this.out
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
  async waitFor(event: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events().find((e) => e['event'] === event);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${event} event; stdout ${this.out}; stderr ${this.err}`);
      await sleep(20);
    }
  }
  async end(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The dump's embedded schemas as name → bytes. */
async function dumpedSchemas(file: string): Promise<Map<string, Uint8Array>> {
  const reader = await BagReader.create(file);
  try {
    return new Map(reader.getSchemas().map((s) => [s.name, s.data]));
  } finally {
    reader.close();
  }
}

async function dumpedUrls(file: string): Promise<{ count: number; tag: string }> {
  const reader = await BagReader.create(file);
  try {
    const info = reader.getInfo();
    return { count: info.messageCount, tag: info.tagName };
  } finally {
    reader.close();
  }
}

describe('vlink-bag trigger', () => {
  test(
    'a {"trigger"} line on stdin dumps the pre window: only the frames of the last second, with their schemas',
    SLOW,
    async () => {
      const dir = newDir();
      const daemon = new Daemon([dir, '--stdin', '--pre', '60']);
      validate('trigger', await daemon.waitFor('ready'));
      // The schema line comes long before the dumped window: the dump embeds it all the same.
      daemon.child.stdin.write(
        `${schemaLine({ name: 'test.Point', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pointDescriptor().fds })}\n`,
      );
      daemon.child.stdin.write(early);
      await sleep(1500);
      daemon.child.stdin.write(late);
      await sleep(200);
      daemon.child.stdin.write('{"trigger":{"reason":"line","pre":1}}\n');
      const dump = await daemon.waitFor('dump');
      assert.equal(await daemon.end(), 0, daemon.err);
      validate('trigger', dump);
      assert.deepEqual([dump['via'], dump['reason'], dump['frames']], ['stdin', 'line', lines(late)]);
      assert.deepEqual(await dumpedUrls(String(dump['file'])), { count: lines(late), tag: 'line' });
      const schemas = await dumpedSchemas(String(dump['file']));
      assert.deepEqual(
        [...schemas.keys()],
        ['test.Point'],
        '/camera (test.Point) is in the dump; json and text have none',
      );
      assert.deepEqual(schemas.get('test.Point'), pointDescriptor().fds);
    },
  );

  test('SIGUSR1 dumps everything in the pre window', SLOW, async (t) => {
    if (process.platform === 'win32') return t.skip('no SIGUSR1 on Windows');
    const dir = newDir();
    const daemon = new Daemon([dir, '--stdin', '--pre', '60']);
    // Before it, Node would take SIGUSR1 as "start the inspector".
    const ready = await daemon.waitFor('ready');
    daemon.child.stdin.write(early + late);
    await sleep(1000);
    process.kill(Number(ready['pid']), 'SIGUSR1');
    const dump = await daemon.waitFor('dump');
    assert.equal(await daemon.end(), 0, daemon.err);
    validate('trigger', dump);
    assert.deepEqual([dump['via'], dump['frames']], ['SIGUSR1', lines(early) + lines(late)]);
    assert.equal(readdirSync(dir).length, 2, 'the dump and its summary sidecar');
  });

  test('POST /trigger dumps the asked window to the asked file; `trigger dump` is its client', SLOW, async () => {
    const dir = newDir();
    const daemon = new Daemon([dir, '--stdin', '--pre', '60', '--http=127.0.0.1:0']);
    const listening = await daemon.waitFor('listening');
    validate('trigger', listening);
    const port = new URL(String(listening['url'])).port;
    await daemon.waitFor('ready');
    daemon.child.stdin.write(early);
    await sleep(1500);
    daemon.child.stdin.write(late);
    await sleep(200);
    const out = join(dir, 'asked.vcap');
    const response = await fetch(`http://127.0.0.1:${port}/trigger`, {
      method: 'POST',
      body: JSON.stringify({ reason: 'brake', pre: 1, out }),
    });
    assert.equal(response.status, 200);
    const asked = (await response.json()) as Record<string, unknown>;
    validate('trigger dump', asked);
    assert.deepEqual([asked['file'], asked['frames'], asked['reason']], [out, lines(late), 'brake']);
    assert.deepEqual(await dumpedUrls(out), { count: lines(late), tag: 'brake' });
    // The CLI client, with the daemon's own window (60 s: both batches).
    const client = await runCli(['trigger', 'dump', '--http', `127.0.0.1:${port}`, '--reason', 'cli', '--json']);
    assert.equal(client.code, 0, client.stderr);
    const result = JSON.parse(client.stdout) as Record<string, unknown>;
    validate('trigger dump', result);
    assert.deepEqual([result['frames'], result['reason']], [lines(early) + lines(late), 'cli']);
    assert.equal((await dumpedUrls(String(result['file']))).count, lines(early) + lines(late));
    assert.equal(await daemon.end(), 0, daemon.err);
    assert.deepEqual(
      daemon
        .events()
        .filter((e) => e['event'] === 'dump')
        .map((e) => e['via']),
      ['http', 'http'],
    );
  });

  test('`trigger dump` without a daemon fails with one line', SLOW, async () => {
    const r = await runCli(['trigger', 'dump', '--http', '127.0.0.1:9']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^vlink-bag trigger dump: http:\/\/127\.0\.0\.1:9\/trigger: no trigger daemon answers/);
  });

  test('a key (Space) dumps, fed by a rosbridge server', SLOW, async (t) => {
    if (!hasScript()) return t.skip('util-linux script is not installed');
    const server = await RosbridgeTestServer.start([{ topic: '/chatter', type: 'std_msgs/msg/String' }], {
      repeat: true,
      intervalMs: 10,
    });
    const dir = newDir();
    const pty = new PtySession(['trigger', dir, '--from', server.url, '--pre', '60']);
    try {
      await pty.waitFor(/Trigger daemon:/);
      // Until the daemon has been sent 40 messages: a fixed 800 ms was too short once under Deno beside another suite
      // (subscribed late, it dumped 0 frames).
      for (let waited = 0; server.published < 40 && waited < 30_000; waited += 50) await sleep(50);
      pty.send(' ');
      const at = await pty.waitFor(/\.vdb: \d+ frames/);
      const match = /(\S+\.vdb): (\d+) frames/.exec(pty.screen.slice(0, at))!;
      assert.ok(Number(match[2]) > 10, pty.screen);
      pty.send('q');
      assert.equal(await pty.exit(), 0);
      const reader = await BagReader.create(join(dir, readdirSync(dir).find((name) => !name.endsWith('.json'))!));
      try {
        const urls = reader.getInfo().urls.map((m) => [m.url, m.ser]);
        assert.deepEqual(urls, [['/chatter', 'std_msgs/msg/String']]);
      } finally {
        reader.close();
      }
    } finally {
      pty.kill();
      await server.close();
    }
  });
});

describe('record --from rosbridge://', () => {
  test('records every topic rosapi lists: url = topic, ser = ROS type, payload = the JSON message', SLOW, async () => {
    const topics = [
      { topic: '/imu', type: 'sensor_msgs/msg/Imu' },
      { topic: '/odom', type: 'nav_msgs/msg/Odometry' },
    ];
    const server = await RosbridgeTestServer.start(topics, { count: 5, intervalMs: 20 });
    const out = tmp.path('ros.vdb');
    try {
      const child = spawn(CLI[0], cliArgs(['record', out, '--from', server.url, '--time', 'log', '-q', '-d', '2']), {
        env: cliEnv(),
        stdio: 'pipe',
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, err);
    } finally {
      await server.close();
    }
    const reader = await BagReader.create(out);
    try {
      const info = reader.getInfo();
      assert.deepEqual(
        info.urls.map((m) => [m.url, m.ser, m.count]).sort(),
        topics.map((t) => [t.topic, t.type, 5]).sort(),
      );
      const got: Array<[string, number, unknown]> = [];
      for await (const frame of reader.frames())
        got.push([frame.url, frame.timestamp, JSON.parse(new TextDecoder().decode(frame.data))]);
      // --time log: header.stamp relative to the first stamp (10 ms apart per message).
      for (const t of topics)
        assert.deepEqual(
          got.filter(([url]) => url === t.topic),
          Array.from({ length: 5 }, (_, i) => [t.topic, i * 10_000, RosbridgeTestServer.message(t.topic, i)]),
        );
    } finally {
      reader.close();
    }
    const subscribed = server.received.filter((m) => m['op'] === 'subscribe').map((m) => [m['topic'], m['type']]);
    assert.deepEqual(subscribed.sort(), topics.map((t) => [t.topic, t.type]).sort());
  });

  test('-u subscribes by name without rosapi', SLOW, async () => {
    const server = await RosbridgeTestServer.start([], { count: 3 });
    const out = tmp.path('ros-u.vdb');
    try {
      const r = await runCli(['record', out, '--from', server.url, '-u', '/scan', '-q', '-d', '1.5']);
      assert.equal(r.code, 0, r.stderr);
    } finally {
      await server.close();
    }
    assert.deepEqual(
      server.received.map((m) => m['op']),
      ['subscribe'],
    );
    const reader = await BagReader.create(out);
    try {
      assert.deepEqual(
        reader.getInfo().urls.map((m) => [m.url, m.ser, m.count]),
        [['/scan', 'json', 3]],
      );
    } finally {
      reader.close();
    }
  });
});
