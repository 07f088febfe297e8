import { BagError, type Frame } from '@vlink/bag';
import type { WSContext } from 'hono/ws';
import { messageText, sendIfOpen } from '../ws/socket.js';
import type { FoxgloveOffer } from './channels.js';

export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';

/** Binary opcodes of the protocol (server → client). */
const MESSAGE_DATA = 1;
const TIME = 2;
export const StatusLevel = { INFO: 0, WARNING: 1, ERROR: 2 } as const;
export type StatusLevel = (typeof StatusLevel)[keyof typeof StatusLevel];
/** A `subscribe` refused in part names this many refusals and counts the rest. */
const MAX_LISTED_REFUSALS = 8;

/**
 * One client of the server side of the Foxglove WebSocket protocol (`foxglove.websocket.v1`, as in
 * @foxglove/ws-protocol 0.8): `serverInfo` and `advertise` on open, the client's `subscribe`/`unsubscribe`
 * bookkeeping, `time` (opcode 2) before the first message of each new timestamp and `messageData` (opcode 1) per
 * subscription, and `status` messages. It knows nothing of where frames come from: the server's socket feeds it from
 * a `ReplaySession` (`foxglove-socket.ts`), `vlink-bag play --serve` from the CLI's player (`feed-server.ts`).
 */
export class FoxgloveConnection {
  /** channel id → the client's one subscription id for it */
  private readonly subscribers = new Map<number, number>();
  private readonly subscriptionChannel = new Map<number, number>();
  private lastTimestamp = -1;

  /** `subscribed` is called after each `subscribe` message once the client has a subscription. */
  constructor(
    readonly ws: WSContext<unknown>,
    private readonly offer: FoxgloveOffer,
    private readonly subscribed: () => void = () => undefined,
  ) {}

  /** Says who we are and what we have. `sessionId` tells a client a new session from a reconnect to the same one. */
  open(sessionId: string): void {
    this.sendJson({
      op: 'serverInfo',
      name: this.offer.serverName,
      capabilities: ['time'],
      supportedEncodings: [],
      metadata: this.offer.metadata,
      sessionId,
    });
    this.sendJson({ op: 'advertise', channels: this.offer.channels });
  }

  get subscriptionCount(): number {
    return this.subscriptionChannel.size;
  }

  /** Whether a subscription of this client would receive a frame of `url`. */
  subscribesTo(url: string): boolean {
    const channel = this.offer.channelOf(url);
    return channel !== undefined && this.subscribers.has(channel.id);
  }

  /** Sends the frame to the subscription of its url's channel (one copy: see `subscribe`); nothing when none. */
  sendFrame(frame: Frame): void {
    const channel = this.offer.channelOf(frame.url);
    const sub = channel && this.subscribers.get(channel.id);
    if (sub === undefined) return;
    const ns = this.offer.timeNs(frame.timestamp);
    if (frame.timestamp !== this.lastTimestamp) {
      this.lastTimestamp = frame.timestamp;
      const time = new Uint8Array(9);
      time[0] = TIME;
      new DataView(time.buffer).setBigUint64(1, ns, true);
      sendIfOpen(this.ws, time);
    }
    const message = new Uint8Array(13 + frame.data.length);
    const view = new DataView(message.buffer);
    message[0] = MESSAGE_DATA;
    view.setUint32(1, sub, true);
    view.setBigUint64(5, ns, true);
    message.set(frame.data, 13);
    sendIfOpen(this.ws, message);
  }

  status(level: StatusLevel, message: string): void {
    this.sendJson({ op: 'status', level, message });
  }

  /** A message from the client: `subscribe` and `unsubscribe`; anything else is answered with an error status. */
  receive(data: unknown): void {
    const text = messageText(data);
    if (text === undefined) {
      this.status(StatusLevel.ERROR, 'client binary messages (clientPublish) are not supported');
      return;
    }
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
      if (typeof message !== 'object' || message === null || Array.isArray(message)) throw new Error('not an object');
    } catch {
      this.status(StatusLevel.ERROR, 'malformed message: not a JSON object');
      return;
    }
    if (message['op'] === 'subscribe') this.subscribe(message);
    else if (message['op'] === 'unsubscribe') this.unsubscribe(message);
    // The op is echoed cut short: a client must not make the server send back what it sent, however long.
    else this.status(StatusLevel.ERROR, `unsupported operation ${JSON.stringify(message['op'])?.slice(0, 64)}`);
  }

  /**
   * Each channel takes one subscription per client, as in the ws-protocol's reference server: a frame is sent once
   * per subscription, so a client subscribing one channel thousands of times under different ids would make the
   * server copy every frame thousands of times in one go, past any backpressure bound. A second subscription to a
   * channel, a reused id and an unknown channel are refused; the refusals of one message go out as one `status`, so
   * a long list of them costs the server one message too.
   */
  private subscribe(message: Record<string, unknown>): void {
    const list = message['subscriptions'];
    if (!Array.isArray(list)) {
      this.status(StatusLevel.ERROR, 'subscribe: "subscriptions" must be an array');
      return;
    }
    const refused: string[] = [];
    let refusedCount = 0;
    const refuse = (why: string) => {
      if (++refusedCount <= MAX_LISTED_REFUSALS) refused.push(why);
    };
    for (const item of list as Array<{ id?: unknown; channelId?: unknown }>) {
      const { id, channelId } = item ?? {};
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffffffff || typeof channelId !== 'number')
        refuse('each subscription needs integer "id" and "channelId"');
      else if (!this.offer.hasChannel(channelId)) refuse(`unknown channel ${channelId}`);
      else if (this.subscriptionChannel.has(id)) refuse(`subscription id ${id} is already in use`);
      else if (this.subscribers.has(channelId))
        refuse(`channel ${channelId} is already subscribed (subscription ${this.subscribers.get(channelId)})`);
      else {
        this.subscriptionChannel.set(id, channelId);
        this.subscribers.set(channelId, id);
      }
    }
    if (refusedCount > 0) {
      const more = refusedCount > refused.length ? `; ${refusedCount - refused.length} more refused` : '';
      this.status(StatusLevel.ERROR, `subscribe: ${refused.join('; ')}${more}`);
    }
    if (this.subscriptionChannel.size > 0) this.subscribed();
  }

  private unsubscribe(message: Record<string, unknown>): void {
    const ids = message['subscriptionIds'];
    if (!Array.isArray(ids)) {
      this.status(StatusLevel.ERROR, 'unsubscribe: "subscriptionIds" must be an array');
      return;
    }
    for (const id of ids) {
      const channelId = this.subscriptionChannel.get(id as number);
      if (channelId === undefined) continue;
      this.subscriptionChannel.delete(id as number);
      this.subscribers.delete(channelId);
    }
  }

  private sendJson(value: unknown): void {
    sendIfOpen(this.ws, JSON.stringify(value));
  }
}

/** Whether a `Sec-WebSocket-Protocol` header offers the Foxglove subprotocol. */
export function offersFoxgloveProtocol(requested: string | undefined): boolean {
  return (requested ?? '')
    .split(',')
    .map((p) => p.trim())
    .includes(FOXGLOVE_SUBPROTOCOL);
}

export function assertFoxgloveProtocol(requested: string | undefined): void {
  if (!offersFoxgloveProtocol(requested))
    throw new BagError(
      'INVALID_ARGUMENT',
      `the Foxglove endpoint needs the WebSocket subprotocol ${FOXGLOVE_SUBPROTOCOL}`,
    );
}
