import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import foxglove from '@foxglove/ws-protocol';
import type { Channel, MessageData, ServerInfo } from '@foxglove/ws-protocol';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { serve, type RunningServer } from './index.js';
import { buildFixtureRoot, pointDescriptor, readAll, START_MS, type FixtureRoot } from './testing/fixtures.js';
import { QueuedSocket, socketClass, type TestSocket } from './testing/ws-client.js';

const { FoxgloveClient } = foxglove;
let fx: FixtureRoot;
let server: RunningServer;
const clients: Array<{ close(): void }> = [];

before(async () => {
  fx = await buildFixtureRoot();
  server = await serve({ root: fx.root, port: 0, token: 'fox' });
});
after(async () => {
  for (const c of clients) c.close();
  await server?.close();
  fx?.cleanup();
});

interface Session {
  info: ServerInfo;
  channels: Channel[];
  messages: MessageData[];
  times: bigint[];
  statuses: string[];
  client: InstanceType<typeof FoxgloveClient>;
  ws: TestSocket;
}

async function connect(id: string, query: string): Promise<Session> {
  const WebSocket = await socketClass();
  const ws = new WebSocket(
    `${server.url.replace('http', 'ws')}/v1/bags/${encodeURIComponent(id)}/foxglove?token=fox&${query}`,
    [FoxgloveClient.SUPPORTED_SUBPROTOCOL],
  );
  const client = new FoxgloveClient({ ws: ws as TestSocket as never });
  clients.push(client);
  const session: Partial<Session> & { messages: MessageData[]; times: bigint[]; statuses: string[] } = {
    messages: [],
    times: [],
    statuses: [],
    client,
    ws,
  };
  client.on('message', (m) =>
    session.messages.push({
      ...m,
      data: new DataView(m.data.buffer.slice(m.data.byteOffset, m.data.byteOffset + m.data.byteLength)),
    }),
  );
  client.on('time', (t) => session.times.push(t.timestamp));
  client.on('status', (s) => session.statuses.push(s.message));
  await new Promise<void>((resolve, reject) => {
    client.on('error', reject);
    client.on('serverInfo', (info) => (session.info = info));
    client.on('advertise', (channels) => {
      session.channels = channels;
      resolve();
    });
  });
  assert.equal(ws.protocol, FoxgloveClient.SUPPORTED_SUBPROTOCOL);
  return session as Session;
}

const waitFor = async (check: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('Foxglove WebSocket', () => {
  test('a FoxgloveClient gets serverInfo, channels and every subscribed message with its time', async () => {
    const s = await connect('proto.vdb', 'rate=0');
    assert.ok(s.info.capabilities.includes('time'));
    const byTopic = new Map(s.channels.map((c) => [c.topic, c]));
    assert.deepEqual([...byTopic.keys()].sort(), ['json/state', 'pb/point', 'text/log']);
    const pb = byTopic.get('pb/point')!;
    assert.equal(pb.encoding, 'protobuf');
    assert.equal(pb.schemaName, 'test.Point');
    assert.equal(pb.schemaEncoding, 'protobuf');
    const set = fromBinary(
      FileDescriptorSetSchema,
      Uint8Array.from(atob(pb.schema), (c) => c.charCodeAt(0)),
    );
    assert.equal(set.file[0]!.messageType[0]!.name, 'Point');
    assert.deepEqual(
      Uint8Array.from(atob(pb.schema), (c) => c.charCodeAt(0)),
      pointDescriptor().fds,
    );
    assert.equal(byTopic.get('json/state')!.encoding, 'json');
    assert.equal(byTopic.get('json/state')!.schema, '');

    const subPb = s.client.subscribe(pb.id);
    const subJson = s.client.subscribe(byTopic.get('json/state')!.id);
    await waitFor(() => s.statuses.includes('end of recording'));
    const frames = await readAll(join(fx.root, 'proto.vdb'));
    const want = frames.filter((f) => f.url === 'pb/point' || f.url === 'json/state');
    assert.equal(s.messages.length, want.length);
    s.messages.forEach((m, i) => {
      const f = want[i]!;
      assert.equal(m.subscriptionId, f.url === 'pb/point' ? subPb : subJson);
      assert.equal(m.timestamp, BigInt(START_MS) * 1_000_000n + BigInt(f.timestamp) * 1000n);
      assert.deepEqual(new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength), f.data);
    });
    assert.ok(s.times.length >= want.length, 'a time message precedes new timestamps');
    assert.equal(s.times[0], BigInt(START_MS) * 1_000_000n + BigInt(want[0]!.timestamp) * 1000n);
  });

  test('unsubscribe stops messages; unknown channels and ops answer status errors', async () => {
    const s = await connect('drive.vdb', 'rate=1&loop=true');
    const imu = s.channels.find((c) => c.topic === 'dds://imu')!;
    const sub = s.client.subscribe(imu.id);
    await waitFor(() => s.messages.length >= 3);
    s.client.unsubscribe(sub);
    await new Promise((r) => setTimeout(r, 100));
    const count = s.messages.length;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(s.messages.length, count);
    s.client.subscribe(9999);
    s.client.getParameters(['x']);
    await waitFor(
      () =>
        s.statuses.some((m) => m.includes('unknown channel 9999')) &&
        s.statuses.some((m) => m.includes('unsupported operation')),
    );
  });

  test('a channel takes one subscription per client: more are refused in one status, each frame goes out once', async () => {
    const s = await connect('proto.vdb', 'rate=0');
    const pb = s.channels.find((c) => c.topic === 'pb/point')!;
    // A client asking for the same channel thousands of times would have each frame copied once per subscription.
    const first = s.client.subscribe(pb.id);
    const statuses = s.statuses.length;
    s.ws.send(
      JSON.stringify({
        op: 'subscribe',
        subscriptions: Array.from({ length: 5000 }, (_, i) => ({ id: first + 1 + i, channelId: pb.id })),
      }),
    );
    await waitFor(() => s.statuses.includes('end of recording'));
    const refusals = s.statuses.slice(statuses).filter((m) => m !== 'end of recording');
    assert.equal(refusals.length, 1, 'one status for the whole subscribe message');
    assert.match(refusals[0]!, new RegExp(`channel ${pb.id} is already subscribed \\(subscription ${first}\\)`));
    assert.match(refusals[0]!, /4992 more refused/);
    const want = (await readAll(join(fx.root, 'proto.vdb'))).filter((f) => f.url === 'pb/point');
    assert.equal(s.messages.length, want.length);
    assert.ok(s.messages.every((m) => m.subscriptionId === first));
  });

  test('the subprotocol is required', async () => {
    await assert.rejects(
      QueuedSocket.connect(`${server.url.replace('http', 'ws')}/v1/bags/drive.vdb/foxglove?token=fox`),
    );
  });
});
