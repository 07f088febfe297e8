import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagReader, BagWriter, type Frame, type Info, SchemaType } from '@vlink/bag';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { upgradeHeaders } from '../testing/raw-http.js';
import { MAX_QUEUED_BYTES, serveFoxgloveFeed } from './feed-server.js';

const MIB = 1024 * 1024;
const frameAt = (i: number): Frame => ({
  timestamp: i * 1000,
  url: '/big',
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
  data: new Uint8Array(MIB).fill(i & 0xff),
});

/** A masked client text frame (RFC 6455 §5.2; payload < 64 KiB). */
function textFrame(text: string): Uint8Array {
  const payload = new TextEncoder().encode(text);
  const mask = [1, 2, 3, 4];
  const head =
    payload.length < 126
      ? [0x81, 0x80 | payload.length]
      : [0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff];
  const out = new Uint8Array(head.length + 4 + payload.length);
  out.set(head);
  out.set(mask, head.length);
  for (let i = 0; i < payload.length; i++) out[head.length + 4 + i] = payload[i]! ^ mask[i % 4]!;
  return out;
}

/** Opens a Foxglove socket over raw TCP, subscribes to channel 1, then stops reading (a client that fell behind). */
async function stalledClient(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const headers = upgradeHeaders(`127.0.0.1:${port}`, { 'Sec-WebSocket-Protocol': 'foxglove.websocket.v1' });
  socket.write(
    `GET / HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  // The 101 and the serverInfo/advertise messages, then nothing more is read.
  await new Promise<void>((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (seen.includes('advertise')) {
        socket.off('data', onData);
        socket.pause();
        resolve();
      }
    };
    socket.on('data', onData);
  });
  socket.write(textFrame(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 7, channelId: 1 }] })));
  return socket;
}

describe('play --serve feed: a client that falls behind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-feed-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** The Info of a bag of url `/big` (what the offer reads). */
  let INFO: Info;
  before(async () => {
    const path = join(dir, 'slow.vcap');
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.push(frameAt(0));
    await writer.close();
    const reader = await BagReader.create(path);
    INFO = reader.getInfo();
    reader.close();
  });

  test('gets no more frames once over the queue bound, and every frame it misses is counted', async () => {
    const feed = await serveFoxgloveFeed({
      host: '127.0.0.1',
      port: 0,
      serverName: 'test',
      bag: INFO.path,
      info: INFO,
      schemas: [],
    });
    const socket = await stalledClient(Number(new URL(feed.url.replace('ws', 'http')).port));
    try {
      await feed.waitForSubscriber(50);
      const frames = Math.ceil((2 * MAX_QUEUED_BYTES) / MIB) + 16;
      for (let i = 0; i < frames; i++) {
        feed.send(frameAt(i));
        // Let the server move what it can to the socket, so only what the client does not take stays queued.
        if (i % 8 === 7) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(feed.dropped > 0, `${frames} frames of 1 MiB to a client that reads nothing: none dropped`);
      assert.ok(feed.dropped < frames, 'the frames before the bound were sent');
    } finally {
      socket.destroy();
      await feed.close(100);
    }
  });
});
