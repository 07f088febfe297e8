import foxglove from '@foxglove/ws-protocol';
import type { Channel, MessageData, ServerInfo } from '@foxglove/ws-protocol';
import { WebSocket } from 'ws';
import { ActionType, type Frame } from '@vlink/bag';
import { CliError } from './errors.js';
import { embedsBinarySchema, FOXGLOVE_SUBPROTOCOL, schemaTypeOfEncoding } from './foxglove.js';
import type { LiveSink } from './live-sink.js';

const { FoxgloveClient } = foxglove;

/** Where a recorded frame's timestamp comes from. */
export type TimeSource = 'receive' | 'log';

interface Subscribed {
  channel: Channel;
  frame: Omit<Frame, 'timestamp' | 'data'>;
}

/**
 * `record --from ws://host:port`: a Foxglove WebSocket client (`foxglove.websocket.v1`). It subscribes to every
 * advertised channel (or the `-u`/`-k` selection, including channels advertised later), embeds protobuf and
 * flatbuffers schemas the server sends, and records each message as a `Sub` frame of url = topic, ser = schemaName.
 *
 * Timestamps: `receive` (default) stamps frames with the writer's clock when they arrive; `log` keeps the server's
 * message log time, relative to a recording start taken from the server's `startTimestamp` metadata (as `vlink-bag
 * play --serve` sends it) or else the first message, so a replayed bag keeps its own timeline. Messages older than
 * that start are stored at 0. Ends when the session stops or the server closes the connection.
 */
export async function recordFromWebSocket(
  session: LiveSink,
  url: string,
  accept: (url: string) => boolean,
  time: TimeSource,
): Promise<void> {
  const ws = new WebSocket(url, [FOXGLOVE_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws: ws as never });
  const subscriptions = new Map<number, Subscribed>();
  let serverStartMs: number | undefined;
  let startNs: bigint | undefined;
  let late = 0;
  let failure: CliError | undefined;

  const connected = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', (error) =>
      reject(new CliError(`cannot connect: ${(error as Error).message || 'connection failed'}`, url)),
    );
    ws.once('unexpected-response', (_req, res) => reject(new CliError(`cannot connect: HTTP ${res.statusCode}`, url)));
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));

  client.on('serverInfo', (info: ServerInfo) => {
    const start = Number(info.metadata?.['startTimestamp']);
    if (Number.isFinite(start) && start > 0) serverStartMs = start;
  });
  // Receive time: subscribe only once the file exists, so every frame is stamped when it arrives (not when a file
  // that was still being created could take it). Log time: subscribe at once; the file opens with the first message.
  let ready = time === 'log';
  const waiting: Channel[] = [];
  const subscribe = (channels: Channel[]) => {
    for (const channel of channels) {
      if (!accept(channel.topic)) continue;
      const schemaType = schemaTypeOfEncoding(channel.encoding);
      const id = client.subscribe(channel.id);
      subscriptions.set(id, {
        channel,
        frame: { url: channel.topic, serType: channel.schemaName, schemaType, actionType: ActionType.Subscribe },
      });
      if (channel.schema && embedsBinarySchema(schemaType) && session.isOpen)
        pushChannelSchema(session, channel, schemaType);
    }
  };
  client.on('advertise', (channels: Channel[]) => (ready ? subscribe(channels) : waiting.push(...channels)));
  client.on('unadvertise', (ids: number[]) => {
    const gone = new Set(ids);
    for (const [id, sub] of subscriptions) if (gone.has(sub.channel.id)) subscriptions.delete(id);
  });
  client.on('status', (status) => session.log(`server: ${status.message}`));
  // Before the connection is up, the failure is reported once by `connected`.
  let up = false;
  client.on('error', (error: Error) => up && session.log(`warning: ${error.message}`));

  const open = async (firstNs: bigint | undefined) => {
    if (session.isOpen) return;
    if (time === 'log' && firstNs !== undefined) {
      const startMs =
        serverStartMs !== undefined && BigInt(serverStartMs) * 1_000_000n <= firstNs
          ? serverStartMs
          : Number(firstNs / 1_000_000n);
      startNs = BigInt(startMs) * 1_000_000n;
      await session.open({ startTimestamp: startMs });
    } else {
      await session.open();
    }
    for (const sub of subscriptions.values()) {
      if (sub.channel.schema && embedsBinarySchema(sub.frame.schemaType))
        pushChannelSchema(session, sub.channel, sub.frame.schemaType);
    }
  };

  const record = (sub: Subscribed, message: MessageData) => {
    let timestamp = -1;
    if (time === 'log' && startNs !== undefined) {
      const us = (message.timestamp - startNs) / 1000n;
      if (us < 0n) late++;
      timestamp = us < 0n ? 0 : Number(us);
    }
    const data = new Uint8Array(message.data.buffer, message.data.byteOffset, message.data.byteLength);
    void session.write({ ...sub.frame, timestamp, data });
    // Backpressure instead of drops: stop reading the socket while the writer's queue is above its high-water mark
    // (TCP then paces the server), and go on once it has drained.
    if (session.mustWait && !ws.isPaused) {
      ws.pause();
      void session.ready().then(() => ws.resume());
    }
  };
  // With log time the file opens with the first message; messages arriving meanwhile queue behind it, in order.
  let chain = Promise.resolve();
  let queued = 0;
  let ended = false;
  client.on('message', (message: MessageData) => {
    const sub = subscriptions.get(message.subscriptionId);
    // After a stop, `ws` may still hand over messages that were on the wire while the connection closed.
    if (!sub || ended) return;
    if (session.isOpen && queued === 0) return record(sub, message);
    queued++;
    chain = chain
      .then(async () => {
        await open(message.timestamp);
        record(sub, message);
      })
      .catch((error: unknown) => {
        failure ??=
          error instanceof CliError ? error : new CliError((error as Error).message, url, undefined, { cause: error });
        session.stop('error');
      })
      .finally(() => queued--);
  });

  await connected;
  up = true;
  if (!ready) {
    await open(undefined);
    ready = true;
    subscribe(waiting.splice(0));
  }
  const reason = await Promise.race([session.stopped, closed.then(() => 'connection closed by the server')]);
  if (reason === 'connection closed by the server') session.stop(reason);
  ended = true;
  client.close();
  await chain;
  if (!session.isOpen) await open(undefined);
  if (late > 0) session.log(`note: ${late} messages older than the recording start were stored at 0 µs`);
  if (failure) throw failure;
}

function pushChannelSchema(session: LiveSink, channel: Channel, schemaType: number): void {
  const bytes = Buffer.from(channel.schema, 'base64');
  session.pushSchema({
    name: channel.schemaName,
    encoding: '',
    schemaType,
    data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  });
}
