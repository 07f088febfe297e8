import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from '@vlink/fixtures/test';
import foxglove from '@foxglove/ws-protocol';
import type { Channel, MessageData, ServerInfo } from '@foxglove/ws-protocol';
import { WebSocket, WebSocketServer } from 'ws';
import { SchemaType } from '@vlink/bag';
import {
  CLI,
  cliArgs,
  cliEnv,
  fixtureFrames,
  hasScript,
  ndjson,
  pointDescriptor,
  PtySession,
  runCli,
  START_MS,
  tempDir,
  writeBag,
  SLOW,
  startPlayServe,
} from './testing/harness.js';
import { withReader } from './testing/sample-bags.js';

const { FoxgloveServer, FoxgloveClient } = foxglove;
const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
const frames = fixtureFrames();

before(() => writeBag(vdb));
after(() => tmp.cleanup());

/** A real FoxgloveServer (@foxglove/ws-protocol over ws) on 127.0.0.1:0, publishing on a timer. */
async function startFoxgloveServer() {
  const server = new FoxgloveServer({
    name: 'test-server',
    capabilities: ['time'],
    metadata: { startTimestamp: String(START_MS) },
  });
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    handleProtocols: (protocols) => server.handleProtocols(protocols),
  });
  await once(wss, 'listening');
  wss.on('connection', (ws) => server.handleConnection(ws as never, 'recorder'));
  const { fds } = pointDescriptor();
  const channels = {
    point: server.addChannel({
      topic: '/point',
      encoding: 'protobuf',
      schemaName: 'test.Point',
      schema: Buffer.from(fds).toString('base64'),
      schemaEncoding: 'protobuf',
    }),
    state: server.addChannel({ topic: '/state', encoding: 'json', schemaName: 'State', schema: '' }),
    table: server.addChannel({
      topic: '/table',
      encoding: 'flatbuffer',
      schemaName: 'fb.Table',
      schema: Buffer.from([1, 2, 3]).toString('base64'),
      schemaEncoding: 'flatbuffer',
    }),
    cdr: server.addChannel({
      topic: '/cdr',
      encoding: 'cdr',
      schemaName: 'std_msgs/msg/String',
      schema: 'string data',
      schemaEncoding: 'ros2msg',
    }),
    ignored: server.addChannel({ topic: '/ignored', encoding: 'json', schemaName: 'X', schema: '' }),
  };
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    const at = BigInt(START_MS) * 1_000_000n + BigInt(tick) * 10_000_000n; // every 10 ms of log time
    server.sendMessage(channels.point, at, new Uint8Array([8, tick & 0x7f]));
    server.sendMessage(channels.state, at, Buffer.from(JSON.stringify({ tick })));
    server.sendMessage(channels.table, at, new Uint8Array([tick & 0xff, 0, 0, 0]));
    server.sendMessage(channels.cdr, at, new Uint8Array([0, 1, 0, 0, tick & 0xff]));
    server.sendMessage(channels.ignored, at, Buffer.from('{}'));
  }, 10);
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  return {
    url,
    async close() {
      clearInterval(timer);
      for (const ws of wss.clients) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

describe('record --from (Foxglove WebSocket client)', () => {
  test('subscribes, maps encodings to families, embeds schemas, keeps log time', SLOW, async () => {
    const server = await startFoxgloveServer();
    try {
      const out = tmp.path('fox.vdb');
      const child = spawn(
        CLI[0],
        cliArgs(['record', out, '--from', server.url, '-k', '/ignored', '-d', '1', '--time', 'log']),
        { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number];
      assert.equal(code, 0, stderr);
      assert.match(stderr, /fox\.vdb: \d+ frames \(.*\) recorded \(duration of 1 s reached\)/);
      const { info, schemas, got } = await withReader(out, (reader) => {
        const got: Array<{ url: string; timestamp: number; data: number[]; serType: string; schemaType: number }> = [];
        reader.openCursor();
        for (let f = reader.next(); f; f = reader.next())
          got.push({
            url: f.url,
            timestamp: f.timestamp,
            data: [...f.data],
            serType: f.serType,
            schemaType: f.schemaType,
          });
        return { info: reader.getInfo(), schemas: reader.getSchemas(), got };
      });
      assert.equal(info.hasCompleted, true);
      assert.equal(info.startTimestamp, START_MS, "the server's startTimestamp metadata");
      const family = new Map(info.urls.map((u) => [u.url, [u.schemaType, u.ser]]));
      assert.deepEqual(Object.fromEntries(family), {
        '/point': [SchemaType.Protobuf, 'test.Point'],
        '/state': [SchemaType.Raw, 'State'],
        '/table': [SchemaType.Flatbuffers, 'fb.Table'],
        '/cdr': [SchemaType.Cdr, 'std_msgs/msg/String'],
      });
      assert.deepEqual(schemas.map((s) => [s.name, s.schemaType]).sort(), [
        ['fb.Table', SchemaType.Flatbuffers],
        ['test.Point', SchemaType.Protobuf],
      ]);
      assert.deepEqual([...schemas.find((s) => s.name === 'test.Point')!.data], [...pointDescriptor().fds]);
      const points = got.filter((f) => f.url === '/point');
      assert.ok(points.length >= 10, `${points.length} points`);
      for (const p of points) {
        // Sent at log time START_MS + tick × 10 ms with payload [8, tick mod 128]: timestamp = tick × 10 000 µs.
        assert.equal(p.timestamp % 10_000, 0);
        assert.equal((p.timestamp / 10_000) % 128, p.data[1]);
      }
      assert.ok(!got.some((f) => f.url === '/ignored'));
    } finally {
      await server.close();
    }
  });

  test('an unreachable server is one error line', SLOW, async () => {
    const child = spawn(CLI[0], cliArgs(['record', tmp.path('never.vdb'), '--from', 'ws://127.0.0.1:9']), {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    assert.equal(code, 1);
    assert.match(stderr, /^vlink-bag record: ws:\/\/127\.0\.0\.1:9\/: cannot connect: .*ECONNREFUSED.*\n$/);
  });
});

describe('play --serve (Foxglove WebSocket server)', () => {
  test('a FoxgloveClient gets the channels with schemas, every frame in order and the time', SLOW, async () => {
    const child = spawn(CLI[0], cliArgs(['play', vdb, '--serve=127.0.0.1:0', '-r', '4']), {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /Serving foxglove\.websocket\.v1 on (ws:\/\/\S+)/.exec(stderr);
        if (match) resolve(match[1]!);
      });
      child.once('close', () => reject(new Error(`play exited: ${stderr}`)));
    });
    const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
    const client = new FoxgloveClient({ ws: ws as never });
    let info: ServerInfo | undefined;
    let channels: Channel[] = [];
    const messages: Array<{ topic: string; timestamp: bigint; data: number[] }> = [];
    const times: bigint[] = [];
    const topics = new Map<number, string>();
    client.on('serverInfo', (i) => (info = i));
    client.on('time', (t) => times.push(t.timestamp));
    client.on('message', (m: MessageData) =>
      messages.push({
        topic: topics.get(m.subscriptionId)!,
        timestamp: m.timestamp,
        data: [...new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength)],
      }),
    );
    client.on('advertise', (advertised) => {
      channels = advertised;
      for (const channel of advertised) topics.set(client.subscribe(channel.id), channel.topic);
    });
    const [code] = (await once(child, 'close')) as [number];
    client.close();
    assert.equal(code, 0, stderr);
    assert.ok(info?.capabilities.includes('time'));
    assert.equal(info?.metadata?.['startTimestamp'], String(START_MS));
    const byTopic = new Map(channels.map((c) => [c.topic, c]));
    assert.deepEqual([...byTopic.keys()].sort(), ['/camera', '/config', '/imu', '/lidar', '/log', '/rpc']);
    assert.equal(byTopic.get('/camera')!.encoding, 'protobuf');
    assert.equal(byTopic.get('/camera')!.schema, Buffer.from(pointDescriptor().fds).toString('base64'));
    assert.equal(byTopic.get('/imu')!.encoding, 'json');
    assert.equal(messages.length, frames.length);
    messages.forEach((m, i) => {
      assert.equal(m.topic, frames[i]!.url);
      assert.equal(m.timestamp, BigInt(START_MS) * 1_000_000n + BigInt(frames[i]!.timestamp) * 1000n);
      assert.deepEqual(m.data, [...frames[i]!.data]);
    });
    assert.equal(times.length, frames.length, 'one time update per distinct frame time');
  });
});

describe('play --serve → record --from --time log', () => {
  test("keeps every frame's url, time and payload", SLOW, async () => {
    const player = await startPlayServe([vdb, '-r', '4']);
    const url = player.url;
    const out = tmp.path('relay.vcap');
    const recorded = await runCli(['record', out, '--from', url, '--time', 'log']);
    assert.equal(recorded.code, 0, recorded.stderr);
    assert.match(recorded.stderr, /relay\.vcap: 200 frames .* \(connection closed by the server\)/);
    const [code, again] = await Promise.all([player.exit, runCli(['cat', out])]);
    assert.equal(code, 0, player.stderr());
    const seen = ndjson(again.stdout).map((l) => `${l['url']} ${l['timestamp']} ${l['data']}`);
    assert.deepEqual(
      seen,
      frames.map((f) => `${f.url} ${f.timestamp} ${Buffer.from(f.data).toString('base64')}`),
    );
    assert.equal((await withReader(out, (r) => r.getInfo())).startTimestamp, START_MS);
  });
});

describe('keys on a terminal', { skip: !hasScript() && 'util-linux `script` is not installed' }, () => {
  test('play: Space pauses and resumes, p steps one frame, q quits', SLOW, async () => {
    const pty = new PtySession(['play', vdb]);
    let at = await pty.waitFor(/Playing \| x1\.00 \| [1-9]\d* frames/);
    pty.send(' ');
    at = await pty.waitFor(/Paused \| x1\.00 \| (\d+) frames/, at);
    const paused = Number(/Paused \| x1\.00 \| (\d+) frames/.exec(pty.screen.slice(0, at).split('\r').pop()!)?.[1]);
    pty.send('p');
    at = await pty.waitFor(new RegExp(`Paused \\| x1\\.00 \\| ${paused + 1} frames`), at);
    // → jumps 1 s forward and stays paused.
    const ms = (text: string) => {
      const [h, m, s, milli] = text.split(':').map(Number) as [number, number, number, number];
      return ((h * 60 + m) * 60 + s) * 1000 + milli;
    };
    const before = ms(/(\d\d:\d\d:\d\d:\d{3})\/\S+ \| Paused/.exec(pty.screen.slice(0, at).split('\r').pop()!)![1]!);
    pty.send('\x1b[C');
    for (let jumped = false; !jumped; ) {
      at = await pty.waitFor(/(\d\d:\d\d:\d\d:\d{3})\/\S+ \| Paused/, at);
      const now = ms(
        /(\d\d:\d\d:\d\d:\d{3})\/\S+ \| Paused[^\r]*$/.exec(pty.screen.slice(0, at))?.[1] ?? '00:00:00:000',
      );
      jumped = now >= before + 900;
    }
    pty.send(' ');
    at = await pty.waitFor(/Playing/, at);
    pty.send('q');
    await pty.waitFor(/Stopped \| \d+ frames/, at);
    assert.equal(await pty.exit(), 0);
  });

  test('fix asks before changing the file: n keeps it, y fixes it', SLOW, async () => {
    const copy = tmp.path('ask.vdb');
    copyFileSync(vdb, copy);
    const no = new PtySession(['fix', '--rebuild', copy]);
    await no.waitFor(/Repair .*ask\.vdb in place, keeping the original as .*ask\.vdb\.bak\? \[y\/N\] /);
    no.send('n\r');
    await no.waitFor(/not fixed \(not confirmed\)/);
    assert.equal(await no.exit(), 1);
    const yes = new PtySession(['fix', '--rebuild', copy]);
    await yes.waitFor(/\[y\/N\] /);
    yes.send('y\r');
    await yes.waitFor(/ask\.vdb: fixed: \d+ frames/);
    assert.equal(await yes.exit(), 0);
  });

  test(
    'reindex draws a progress bar from core on a terminal: index steps of a .vdb, bytes of a .vcap',
    SLOW,
    async () => {
      const copyVdb = tmp.path('bar.vdb');
      copyFileSync(vdb, copyVdb);
      const copyVcap = tmp.path('bar.vcap');
      await writeBag(copyVcap);
      for (const [path, amount] of [
        [copyVdb, /5\/5 steps/],
        [copyVcap, /(\d+(\.\d+)? ?[KMG]?i?B) \/ \1/],
      ] as const) {
        const pty = new PtySession(['reindex', path]);
        const name = path.slice(path.lastIndexOf('/') + 1).replace('.', '\\.');
        const at = await pty.waitFor(new RegExp(`reindex .*${name} \\[.*\\] 100% \\| ${amount.source}`));
        await pty.waitFor(/reindexed/, at);
        assert.equal(await pty.exit(), 0);
      }
    },
  );

  test('record --from: Space pauses, q stops and the file is complete', SLOW, async () => {
    const server = await startFoxgloveServer();
    try {
      const out = tmp.path('keys.vcap');
      const pty = new PtySession(['record', out, '--from', server.url]);
      let at = await pty.waitFor(/Recording \d\d:\d\d:\d\d \| [1-9]\d* frames/);
      pty.send(' ');
      at = await pty.waitFor(/Paused \d\d:\d\d:\d\d \| \d+ frames/, at);
      pty.send(' ');
      at = await pty.waitFor(/Recording/, at);
      pty.send('q');
      await pty.waitFor(/keys\.vcap: \d+ frames \(.*\) recorded, \d+ skipped while paused \(stopped by user\)/, at);
      assert.equal(await pty.exit(), 0);
      const info = await withReader(out, (reader) => reader.getInfo());
      assert.equal(info.hasCompleted, true);
      assert.ok(info.messageCount > 0);
    } finally {
      await server.close();
    }
  });
});
