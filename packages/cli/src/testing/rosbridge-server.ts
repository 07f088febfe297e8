import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A rosbridge v2 (JSON protocol) test server: answers `/rosapi/topics` with its topics and types, and on `subscribe`
 * publishes `count` messages of that topic every `intervalMs` (ROS 2 style `header.stamp`), then keeps the
 * connection open. Records what clients sent, so a test can check the subscriptions.
 */
export class RosbridgeTestServer {
  readonly received: Array<Record<string, unknown>> = [];
  /** Messages published so far, over every subscription. */
  published = 0;
  private constructor(
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  static async start(
    topics: ReadonlyArray<{ topic: string; type: string }>,
    options: { count?: number; intervalMs?: number; repeat?: boolean } = {},
  ): Promise<RosbridgeTestServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const address = wss.address();
    const server = new RosbridgeTestServer(wss, typeof address === 'object' && address ? address.port : 0);
    wss.on('connection', (socket: WebSocket) => {
      const timers: Array<ReturnType<typeof setInterval>> = [];
      socket.on('close', () => {
        for (const timer of timers) clearInterval(timer);
      });
      socket.on('message', (raw) => {
        const message = JSON.parse(raw.toString()) as Record<string, unknown>;
        server.received.push(message);
        if (message['op'] === 'call_service' && message['service'] === '/rosapi/topics') {
          socket.send(
            JSON.stringify({
              op: 'service_response',
              id: message['id'],
              service: '/rosapi/topics',
              result: true,
              values: { topics: topics.map((t) => t.topic), types: topics.map((t) => t.type) },
            }),
          );
        } else if (message['op'] === 'subscribe') {
          const topic = String(message['topic']);
          let i = 0;
          const timer = setInterval(() => {
            if (!options.repeat && i >= (options.count ?? 5)) return clearInterval(timer);
            socket.send(JSON.stringify({ op: 'publish', topic, msg: RosbridgeTestServer.message(topic, i++) }));
            server.published++;
          }, options.intervalMs ?? 20);
          timers.push(timer);
        }
      });
    });
    return server;
  }

  /** The i-th message of a topic: a ROS 2 header 10 ms apart and a payload naming both. */
  static message(topic: string, i: number): Record<string, unknown> {
    return { header: { stamp: { sec: 100, nanosec: i * 10_000_000 }, frame_id: 'base' }, data: `${topic}#${i}` };
  }

  get url(): string {
    return `rosbridge://127.0.0.1:${this.port}`;
  }

  /** Closes every client connection (a recording then ends) and the server. */
  async close(): Promise<void> {
    for (const client of this.wss.clients) client.close();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
