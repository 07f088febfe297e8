import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import foxglove from '@foxglove/ws-protocol';
import type { Channel, MessageData } from '@foxglove/ws-protocol';
import { WebSocket } from 'ws';
import { fixturePath } from '@vlink/fixtures';
import { PayloadDecoder, type DecoderSchema } from '@vlink/bag-decode';
import { serve, type RunningServer } from '@vlink/bag-server';
import { ndjson, runCli, SLOW, startPlayServe, tempDir, writeBag } from './testing/harness.js';

// One bag, four surfaces: `cat --decode`, the HTTP API's `decode=true`, `play --serve` and the server's Foxglove
// endpoint must show the same channels and the same decoded values (all go through @vlink/bag-decode).
const { FoxgloveClient } = foxglove;
const tmp = tempDir();
const TOKEN = 'agree';
let server: RunningServer;
const BAGS = ['fixture.vdb', 'plain.bag', 'ros2.mcap', 'json.mcap', 'protobuf.mcap', 'flight.ulg'];

before(async () => {
  await writeBag(tmp.path('fixture.vdb'));
  copyFileSync(fixturePath('foreign', 'ros1', 'plain.bag'), tmp.path('plain.bag'));
  for (const name of ['ros2.mcap', 'json.mcap', 'protobuf.mcap'])
    copyFileSync(fixturePath('foreign', 'mcap', name), tmp.path(name));
  copyFileSync(fixturePath('foreign', 'ulog', 'flight.ulg'), tmp.path('flight.ulg'));
  server = await serve({ root: tmp.dir, port: 0, token: TOKEN });
});
after(async () => {
  await server?.close();
  tmp.cleanup();
});

interface Received {
  /** Which surface sent it, and what it printed (for the failure message). */
  surface: string;
  channels: Channel[];
  messages: Array<{ topic: string; data: Uint8Array }>;
}

/**
 * Connects a FoxgloveClient, subscribes to every channel and collects until the server closes or says it ended.
 * Not until the player's process exits: under load its exit can be seen before the frames it sent were read.
 */
async function foxgloveSession(url: string, surface: string): Promise<Received> {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws: ws as never });
  const got: Received = { surface, channels: [], messages: [] };
  const topics = new Map<number, string>();
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  client.on('advertise', (channels) => {
    got.channels.push(...channels);
    for (const channel of channels) topics.set(client.subscribe(channel.id), channel.topic);
  });
  client.on('message', (m: MessageData) =>
    got.messages.push({
      topic: topics.get(m.subscriptionId)!,
      data: new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength).slice(),
    }),
  );
  client.on('status', (s) => s.message === 'end of recording' && end());
  client.on('close', () => end());
  await done;
  client.close();
  return got;
}

async function playServe(bag: string): Promise<Received> {
  const player = await startPlayServe([bag, '-r', '50']);
  // `play --serve` closes every client (1001) before it exits, and a player that dies closes the socket with it.
  const got = await foxgloveSession(player.url, 'play --serve');
  assert.equal(await player.exit, 0, player.stderr());
  got.surface += `, which printed: ${player.stderr()}`;
  return got;
}

/** Decodes what a Foxglove client received with nothing but the channel advertisement, as Studio would. */
function decodeAsFoxgloveClient(received: Received): Array<{ topic: string; value: unknown }> {
  const binary = new Set(['protobuf', 'flatbuffer']);
  const schemas: DecoderSchema[] = received.channels
    .filter((c) => c.schema !== '')
    .map((c) => ({
      name: c.schemaName,
      encoding: c.schemaEncoding ?? c.encoding,
      schemaType: 0,
      data: binary.has(c.schemaEncoding ?? '')
        ? Uint8Array.from(atob(c.schema), (ch) => ch.charCodeAt(0))
        : new TextEncoder().encode(c.schema),
    }));
  const decoder = new PayloadDecoder({
    schemas,
    urls: received.channels.map((c) => ({ url: c.topic, encoding: c.encoding })),
  });
  const byTopic = new Map(received.channels.map((c) => [c.topic, c]));
  return received.messages.map((m) => {
    const decoded = decoder.decode({
      url: m.topic,
      serType: byTopic.get(m.topic)!.schemaName,
      schemaType: 0,
      actionType: 0,
      data: m.data,
    });
    // As the other surfaces send it: through JSON text (-0 is 0 there).
    return { topic: m.topic, value: decoded.kind === 'hex' ? null : JSON.parse(JSON.stringify(decoded.value)) };
  });
}

const withoutIds = (channels: Channel[]) =>
  channels.map(({ id: _id, ...rest }) => rest).sort((a, b) => (a.topic < b.topic ? -1 : 1));

describe('one decoder and one channel mapping on every surface', () => {
  for (const name of BAGS) {
    test(`${name}: cat --decode = HTTP decode=true = Foxglove (play --serve and the server)`, SLOW, async () => {
      const path = tmp.path(name);
      const cat = await runCli(['cat', path, '--decode']);
      assert.equal(cat.code, 0, cat.stderr);
      const cli = ndjson(cat.stdout);

      const response = await fetch(
        `${server.url}/v1/bags/${encodeURIComponent(name)}/messages?decode=true&format=ndjson`,
        {
          headers: { authorization: `Bearer ${TOKEN}` },
        },
      );
      assert.equal(response.status, 200, await response.clone().text());
      const http = ndjson(await response.text());
      assert.equal(http.length, cli.length, 'same messages');
      let decodedCount = 0;
      http.forEach((h, i) => {
        const c = cli[i]!;
        assert.equal(c['url'], h['url']);
        if (h['decoded'] === null) {
          // The CLI shows UTF-8 Raw payloads as text (rawAsText); nothing else decodes on one side only.
          assert.ok(c['decoded'] === null || (typeof c['decoded'] === 'string' && h['schemaType'] === 1), `${i}`);
        } else {
          decodedCount++;
          assert.deepEqual(c['decoded'], h['data'], `${name} #${i} ${String(h['url'])}`);
        }
      });
      assert.ok(decodedCount > 0, 'something decoded');

      const endpoint = await foxgloveSession(
        `${server.url.replace('http', 'ws')}/v1/bags/${encodeURIComponent(name)}/foxglove?token=${TOKEN}&rate=0`,
        'the server',
      );
      const played = await playServe(path);
      assert.deepEqual(withoutIds(played.channels), withoutIds(endpoint.channels), 'the same channel list');

      // What a Foxglove client decodes from each endpoint equals what the HTTP API decoded, url by url, in order
      // (RPC urls aside: a channel advertises one schema, the request's).
      for (const received of [endpoint, played]) {
        const rpc = new Set(http.filter((h) => String(h['serType']).includes('|')).map((h) => h['url']));
        const fox = decodeAsFoxgloveClient(received).filter((m) => !rpc.has(m.topic));
        const want = http.filter((h) => !rpc.has(h['url']));
        const topics = (list: Array<{ topic: string }>) => list.map((m) => m.topic).join(' ');
        assert.equal(
          fox.length,
          want.length,
          `${received.surface}\ngot:  ${topics(fox)}\nwant: ${topics(want.map((h) => ({ topic: String(h['url']) })))}`,
        );
        fox.forEach((m, i) => {
          assert.equal(m.topic, want[i]!['url']);
          if (want[i]!['decoded'] !== null) assert.deepEqual(m.value, want[i]!['data'], `${name} ${m.topic} #${i}`);
        });
      }
    });
  }
});
