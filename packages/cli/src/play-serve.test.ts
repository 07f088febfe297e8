import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from '@vlink/fixtures/test';
import foxglove from '@foxglove/ws-protocol';
import type { Channel, ServerInfo } from '@foxglove/ws-protocol';
import { WebSocket } from 'ws';
import { serve, type RunningServer } from '@vlink/bag-server';
import { runCli, SLOW, START_MS, startPlayServe, tempDir, writeBag } from './testing/harness.js';

// `play --serve` is the server's Foxglove socket fed by the CLI's player: one protocol, one channel offer. These
// tests hold the two against each other with @foxglove/ws-protocol's own client, as Foxglove Studio would connect.
const { FoxgloveClient } = foxglove;
const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
let server: RunningServer;

before(async () => {
  await writeBag(vdb);
  server = await serve({ root: tmp.dir, port: 0 });
});
after(async () => {
  await server?.close();
  tmp.cleanup();
});

interface Hello {
  info: ServerInfo;
  channels: Channel[];
  client: InstanceType<typeof FoxgloveClient>;
}

/** Opens a FoxgloveClient and resolves with what the server says on open: `serverInfo`, then `advertise`. */
async function hello(url: string, options: { origin?: string } = {}): Promise<Hello> {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], options);
  const client = new FoxgloveClient({ ws: ws as never });
  let info: ServerInfo | undefined;
  return new Promise((resolve, reject) => {
    client.on('error', reject);
    client.on('close', () => reject(new Error(`${url} closed before advertising`)));
    client.on('serverInfo', (i) => (info = i));
    client.on('advertise', (channels) => resolve({ info: info!, channels, client }));
  });
}

/** `play --serve` on the bag: what it advertises; then every channel is subscribed so the player runs to its end. */
async function playHello(args: readonly string[], options: { origin?: string } = {}): Promise<Hello> {
  const player = await startPlayServe([vdb, '-r', '50', ...args]);
  const got = await hello(player.url, options);
  let messages = 0;
  got.client.on('message', () => messages++);
  for (const channel of got.channels) got.client.subscribe(channel.id);
  assert.equal(await player.exit, 0, player.stderr());
  got.client.close();
  assert.ok(messages > 0, 'frames reached the client');
  return got;
}

async function endpointHello(): Promise<Hello> {
  const got = await hello(`${server.url.replace('http', 'ws')}/v1/bags/drive.vdb/foxglove`);
  got.client.close();
  return got;
}

describe('play --serve is the server’s Foxglove socket', () => {
  test('the same capabilities, metadata and channels (ids included) as the server for the same bag', SLOW, async () => {
    const endpoint = await endpointHello();
    const played = await playHello([]);
    assert.deepEqual(played.channels, endpoint.channels);
    assert.deepEqual(played.info.capabilities, endpoint.info.capabilities);
    assert.deepEqual(played.info.capabilities, ['time']);
    assert.equal(played.info.metadata?.['startTimestamp'], String(START_MS));
    assert.equal(played.info.metadata?.['startTimestamp'], endpoint.info.metadata?.['startTimestamp']);
    assert.equal(played.info.metadata?.['format'], endpoint.info.metadata?.['format']);
    assert.equal(played.info.metadata?.['bag'], vdb);
    assert.equal(endpoint.info.metadata?.['bag'], 'drive.vdb');
  });

  test('a url selection advertises those urls under the server’s channel ids', SLOW, async () => {
    const endpoint = await endpointHello();
    const played = await playHello(['-u', '/imu,/config']);
    assert.deepEqual(
      played.channels,
      endpoint.channels.filter((c) => c.topic === '/imu' || c.topic === '/config'),
    );
  });

  test('Foxglove Studio in a browser (Origin https://app.foxglove.dev) connects, as before', SLOW, async () => {
    const played = await playHello([], { origin: 'https://app.foxglove.dev' });
    assert.ok(played.channels.length > 0);
  });

  test('a plain HTTP request and a socket without the subprotocol are refused', SLOW, async () => {
    const player = await startPlayServe([vdb, '--no-wait', '-r', '0.1']);
    try {
      const response = await fetch(player.url.replace('ws', 'http'));
      assert.equal(response.status, 426);
      assert.match(await response.text(), /foxglove\.websocket\.v1/);
      const bare = new WebSocket(player.url);
      const [error] = (await once(bare, 'error')) as [Error];
      assert.match(error.message, /400/);
    } finally {
      // Ctrl-C: the player stops and exits 0 (stopped by the user).
      player.kill();
      await player.exit;
    }
  });

  test('a client that never answers the closing handshake does not keep play from exiting', SLOW, async () => {
    const player = await startPlayServe([vdb, '--no-wait', '-e', '1']);
    const { port } = new URL(player.url);
    const raw = connect(Number(port), '127.0.0.1');
    raw.on('error', () => undefined);
    let answer = '';
    raw.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    // A WebSocket upgrade by hand, after which this client reads nothing and answers nothing.
    raw.write(
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n\r\n',
    );
    try {
      assert.equal(await player.exit, 0, player.stderr());
      assert.match(answer, /^HTTP\/1\.1 101 /);
    } finally {
      raw.destroy();
    }
  });

  test('a busy address is one error line naming it', SLOW, async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const { port } = busy.address() as AddressInfo;
    try {
      const result = await runCli(['play', vdb, `--serve=127.0.0.1:${port}`]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        new RegExp(
          `^vlink-bag play: .*drive\\.vdb: cannot listen on 127\\.0\\.0\\.1:${port}: address already in use\\n$`,
        ),
      );
    } finally {
      busy.close();
    }
  });
});
