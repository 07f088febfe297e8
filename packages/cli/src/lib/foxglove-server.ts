import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import foxglove from '@foxglove/ws-protocol';
import { WebSocketServer } from 'ws';
import type { Frame, Info, SchemaData } from '@vlink/bag';
import { CliError } from './errors.js';
import { foxgloveChannels } from '@vlink/bag-decode';
import type { HostPort } from './parse.js';

const { FoxgloveServer } = foxglove;

/**
 * `play --serve`: a Foxglove WebSocket server (`foxglove.websocket.v1`, @foxglove/ws-protocol's `FoxgloveServer`
 * over `ws`) that Foxglove Studio, Lichtblick and `vlink-bag record --from` can open. One channel per url with its
 * schema; capability `time`: the playback clock is broadcast before each frame. Timestamps are absolute ns
 * (recording start + frame time); the server metadata carries `startTimestamp` (ms) so a recorder can keep the
 * bag's timeline. The playback itself (pace, pause, jumps) stays with the CLI.
 */
export class PlayServer {
  private readonly server: InstanceType<typeof FoxgloveServer>;
  private readonly channelByUrl = new Map<string, number>();
  private readonly subscribed = new Set<number>();
  private readonly startNs: bigint;
  private lastTimeUs = -1;
  private firstSubscribe: Promise<void>;
  clients = 0;

  private constructor(
    private readonly wss: WebSocketServer,
    readonly url: string,
    info: Info,
    schemas: readonly SchemaData[],
    keep: ReadonlySet<string> | undefined,
  ) {
    this.startNs = BigInt(Math.round(info.startTimestamp)) * 1_000_000n;
    this.server = new FoxgloveServer({
      name: `vlink-bag ${info.path}`,
      capabilities: ['time'],
      metadata: { bag: info.path, format: info.format, startTimestamp: String(info.startTimestamp) },
    });
    for (const channel of foxgloveChannels(info.urls, schemas)) {
      if (keep && !keep.has(channel.topic)) continue;
      this.channelByUrl.set(channel.topic, this.server.addChannel(channel));
    }
    let resolveFirst!: () => void;
    this.firstSubscribe = new Promise((resolve) => (resolveFirst = resolve));
    this.server.on('subscribe', (id) => {
      this.subscribed.add(id);
      resolveFirst();
    });
    this.server.on('unsubscribe', (id) => this.subscribed.delete(id));
    this.server.on('error', () => {
      // a client sent something the protocol does not allow; the library already answered it with a status
    });
    wss.on('connection', (ws, req) => {
      this.clients++;
      ws.once('close', () => this.clients--);
      this.server.handleConnection(ws as never, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
    });
  }

  static async listen(
    address: HostPort,
    info: Info,
    schemas: readonly SchemaData[],
    keep?: ReadonlySet<string>,
  ): Promise<PlayServer> {
    const wss = new WebSocketServer({
      host: address.host,
      port: address.port,
      handleProtocols: (protocols) =>
        protocols.has(foxglove.FoxgloveServer.SUPPORTED_SUBPROTOCOL)
          ? foxglove.FoxgloveServer.SUPPORTED_SUBPROTOCOL
          : false,
    });
    try {
      await Promise.race([once(wss, 'listening'), once(wss, 'error').then(([error]) => Promise.reject(error))]);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(
        `cannot listen on ${address.host}:${address.port}: ${code === 'EADDRINUSE' ? 'address already in use' : (error as Error).message}`,
        info.path,
      );
    }
    const port = (wss.address() as AddressInfo).port;
    const host = address.host.includes(':') ? `[${address.host}]` : address.host;
    return new PlayServer(wss, `ws://${host}:${port}`, info, schemas, keep);
  }

  /**
   * Resolves once a client subscribed, plus `settleMs`: clients send one `subscribe` per channel (or several in a
   * row), so playback waits for the burst to end instead of starting with only the first channel subscribed.
   */
  async waitForSubscriber(settleMs = 200): Promise<void> {
    await this.firstSubscribe;
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  }

  send(frame: Frame): void {
    const channel = this.channelByUrl.get(frame.url);
    if (channel === undefined) return;
    const ns = this.startNs + BigInt(Math.round(frame.timestamp)) * 1000n;
    if (frame.timestamp !== this.lastTimeUs) {
      this.lastTimeUs = frame.timestamp;
      this.server.broadcastTime(ns);
    }
    if (this.subscribed.has(channel)) this.server.sendMessage(channel, ns, frame.data as Uint8Array<ArrayBuffer>);
  }

  /** Waits (up to `ms`) for the clients to take what was sent, then closes every connection and the listener. */
  async close(ms = 2000): Promise<void> {
    const deadline = Date.now() + ms;
    const pending = () => [...this.wss.clients].some((ws) => ws.bufferedAmount > 0);
    while (pending() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const ws of this.wss.clients) ws.close(1001, 'playback finished');
    const grace = Date.now() + 500;
    while (this.wss.clients.size > 0 && Date.now() < grace) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
