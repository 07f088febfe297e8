import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { HostPort } from './parse.js';

/**
 * The trigger daemon's control endpoint (loopback by default): `POST /trigger` with an optional JSON body (`reason`,
 * `pre`/`post` seconds, `out`, `urls`, `skipUrls`) answers the dump's result once it is written (or an error), and
 * `GET /status` the recorder's counters. `vlink-bag trigger dump` is its client.
 */
export interface TriggerHttpHandlers {
  trigger(body: Record<string, unknown>): Promise<unknown>;
  status(): unknown;
}

export async function listenTriggerHttp(
  address: HostPort,
  handlers: TriggerHttpHandlers,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const reply = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(value)}\n`);
    };
    if (req.method === 'GET' && req.url === '/status') return reply(200, handlers.status());
    if (req.method !== 'POST' || req.url !== '/trigger') return reply(404, { error: 'POST /trigger or GET /status' });
    void readBody(req)
      .then((text) => (text.trim() === '' ? {} : (JSON.parse(text) as Record<string, unknown>)))
      .then(
        async (body) => {
          try {
            reply(200, await handlers.trigger(body));
          } catch (error) {
            const code = (error as { code?: string }).code;
            reply(code === 'BUSY' ? 409 : 500, { error: (error as Error).message, code });
          }
        },
        () => reply(400, { error: 'the body must be a JSON object' }),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : address.port;
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return { url: `http://${host}:${port}`, server };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 64 * 1024) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}
