import { BagError, type Frame, type Info, type SchemaData } from '@vlink/bag';
import type { Channel } from '@foxglove/ws-protocol';
import type { WSContext, WSEvents } from 'hono/ws';
import { ReplaySession, type ReplaySource } from '../replay/replay-session.js';
import { messageText, sendIfOpen } from '../ws/socket.js';
import { channelsFor } from './channels.js';

export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';

/** Binary opcodes of the protocol (server → client). */
const MESSAGE_DATA = 1;
const TIME = 2;
const StatusLevel = { INFO: 0, WARNING: 1, ERROR: 2 } as const;
/** The replay starts this long after the last subscribe of the first burst. */
const START_DEBOUNCE_MS = 100;

export interface FoxgloveOptions {
  id: string;
  info: Info;
  schemas: readonly SchemaData[];
  source: ReplaySource;
  /** Replay speed (0 = as fast as the client reads), window (ms) and looping, from the query string. */
  rate: number;
  beginMs: number;
  endMs?: number;
  loop: boolean;
  serverName: string;
  bufferedAmount(ws: WSContext<unknown>): number;
  track(ws: WSContext<unknown>, open: boolean): void;
}

/**
 * `WS /v1/bags/{id}/foxglove`: the server side of the Foxglove WebSocket protocol (`foxglove.websocket.v1`, as in
 * @foxglove/ws-protocol 0.8). On open: `serverInfo` (capability `time`) and `advertise` (one channel per url). The
 * replay starts once the first burst of `subscribe` messages has settled (100 ms after the last one), at the pace given by `?rate=` (default 1), and sends `time` (opcode 2)
 * before each message timestamp and `messageData` (opcode 1) per subscription. Timestamps are absolute ns
 * (recording start + frame time). Playback control is not part of protocol 0.8, so it is steered by the query.
 */
export function foxgloveSocket(options: FoxgloveOptions): WSEvents<unknown> {
  const channels = channelsFor(options.info, options.schemas);
  const channelByUrl = new Map<string, Channel>(channels.map((c) => [c.topic, c]));
  const channelIds = new Set(channels.map((c) => c.id));
  /** channel id → subscription ids */
  const subscribers = new Map<number, Set<number>>();
  const subscriptionChannel = new Map<number, number>();
  const startNs = BigInt(Math.round(options.info.startTimestamp)) * 1_000_000n;
  let session: ReplaySession | undefined;
  let lastTime = -1;
  let reportedDrops = 0;

  const sendJson = (ws: WSContext<unknown>, value: unknown) => sendIfOpen(ws, JSON.stringify(value));
  const status = (ws: WSContext<unknown>, level: number, message: string) =>
    sendJson(ws, { op: 'status', level, message });

  const sendFrame = (ws: WSContext<unknown>, frame: Frame) => {
    const channel = channelByUrl.get(frame.url);
    const subs = channel && subscribers.get(channel.id);
    if (!subs || subs.size === 0) return;
    const ns = startNs + BigInt(Math.round(frame.timestamp)) * 1000n;
    if (frame.timestamp !== lastTime) {
      lastTime = frame.timestamp;
      const time = new Uint8Array(9);
      time[0] = TIME;
      new DataView(time.buffer).setBigUint64(1, ns, true);
      sendIfOpen(ws, time);
    }
    for (const sub of subs) {
      const message = new Uint8Array(13 + frame.data.length);
      const view = new DataView(message.buffer);
      message[0] = MESSAGE_DATA;
      view.setUint32(1, sub, true);
      view.setBigUint64(5, ns, true);
      message.set(frame.data, 13);
      sendIfOpen(ws, message);
    }
  };

  const subscribe = (ws: WSContext<unknown>, message: Record<string, unknown>) => {
    const list = message['subscriptions'];
    if (!Array.isArray(list)) return status(ws, StatusLevel.ERROR, 'subscribe: "subscriptions" must be an array');
    for (const item of list as Array<{ id?: unknown; channelId?: unknown }>) {
      const { id, channelId } = item ?? {};
      if (
        typeof id !== 'number' ||
        !Number.isInteger(id) ||
        id < 0 ||
        id > 0xffffffff ||
        typeof channelId !== 'number'
      ) {
        status(ws, StatusLevel.ERROR, 'subscribe: each subscription needs integer "id" and "channelId"');
        continue;
      }
      if (!channelIds.has(channelId)) {
        status(ws, StatusLevel.ERROR, `subscribe: unknown channel ${channelId}`);
        continue;
      }
      if (subscriptionChannel.has(id)) {
        status(ws, StatusLevel.ERROR, `subscribe: subscription id ${id} is already in use`);
        continue;
      }
      subscriptionChannel.set(id, channelId);
      let subs = subscribers.get(channelId);
      if (!subs) subscribers.set(channelId, (subs = new Set()));
      subs.add(id);
    }
    // Clients subscribe one message per channel: wait for the burst to settle so a fast replay does not start
    // before the last subscription of the burst arrives.
    if (!started && subscriptionChannel.size > 0) {
      if (startTimer !== undefined) clearTimeout(startTimer);
      startTimer = setTimeout(start, START_DEBOUNCE_MS);
    }
  };

  const unsubscribe = (ws: WSContext<unknown>, message: Record<string, unknown>) => {
    const ids = message['subscriptionIds'];
    if (!Array.isArray(ids)) return status(ws, StatusLevel.ERROR, 'unsubscribe: "subscriptionIds" must be an array');
    for (const id of ids) {
      const channelId = subscriptionChannel.get(id as number);
      if (channelId === undefined) continue;
      subscriptionChannel.delete(id as number);
      subscribers.get(channelId)?.delete(id as number);
    }
  };

  let started = false;
  let startTimer: ReturnType<typeof setTimeout> | undefined;
  const start = () => {
    startTimer = undefined;
    if (started || !session) return;
    started = true;
    const config = {
      rate: options.rate,
      beginMs: options.beginMs,
      times: options.loop ? 0 : 1,
      paused: false,
    } as const;
    session!.play(options.endMs !== undefined ? { ...config, endMs: options.endMs } : { ...config });
  };

  return {
    onOpen(_event, ws) {
      options.track(ws, true);
      session = new ReplaySession(options.source, {
        buffered: () => options.bufferedAmount(ws),
        frame: (frame) => sendFrame(ws, frame),
        status: (event) => {
          if (event.dropped > reportedDrops) {
            reportedDrops = event.dropped;
            status(ws, StatusLevel.WARNING, `client too slow: ${event.dropped} messages dropped so far`);
          }
        },
        finished: (interrupted) => {
          if (!interrupted) status(ws, StatusLevel.INFO, 'end of recording');
        },
        error: (error) => status(ws, StatusLevel.ERROR, `${error.code}: ${error.message}`),
      });
      sendJson(ws, {
        op: 'serverInfo',
        name: options.serverName,
        capabilities: ['time'],
        supportedEncodings: [],
        metadata: { bag: options.id, format: options.info.format, startTimestamp: String(options.info.startTimestamp) },
        sessionId: `${options.id}@${Date.now()}`,
      });
      sendJson(ws, { op: 'advertise', channels });
    },
    onMessage(event, ws) {
      const text = messageText(event.data);
      if (text === undefined)
        return status(ws, StatusLevel.ERROR, 'client binary messages (clientPublish) are not supported');
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(text) as Record<string, unknown>;
        if (typeof message !== 'object' || message === null || Array.isArray(message)) throw new Error('not an object');
      } catch {
        return status(ws, StatusLevel.ERROR, 'malformed message: not a JSON object');
      }
      switch (message['op']) {
        case 'subscribe':
          return subscribe(ws, message);
        case 'unsubscribe':
          return unsubscribe(ws, message);
        default:
          return status(ws, StatusLevel.ERROR, `unsupported operation ${JSON.stringify(message['op'])}`);
      }
    },
    onClose(_event, ws) {
      options.track(ws, false);
      if (startTimer !== undefined) clearTimeout(startTimer);
      session?.close();
    },
    onError(_event, ws) {
      options.track(ws, false);
      if (startTimer !== undefined) clearTimeout(startTimer);
      session?.close();
    },
  };
}

export function assertFoxgloveProtocol(requested: string | undefined): void {
  const offered = (requested ?? '').split(',').map((p) => p.trim());
  if (!offered.includes(FOXGLOVE_SUBPROTOCOL)) {
    throw new BagError(
      'INVALID_ARGUMENT',
      `the Foxglove endpoint needs the WebSocket subprotocol ${FOXGLOVE_SUBPROTOCOL}`,
    );
  }
}
