import { hostname, networkInterfaces } from 'node:os';
import type { AppOptions } from '../app.js';
import type { HostName } from '../http/guard.js';
import type { WebSocketSupport } from '../ws/socket.js';

// What every runtime adapter implements and the helpers they share. Each runtime has a listener (`*-listener.ts`:
// serve any app on host:port with that runtime's server and WebSockets) and an adapter (`node.ts`, `bun.ts`,
// `deno.ts`: the bag API on that listener, the package's `./node` … entry points). `runtime.ts` picks the listener
// and imports it lazily; listeners and adapters import only this file, so neither side imports the other.

export interface ServeOptions extends Omit<AppOptions, 'websocket' | 'boundHosts'> {
  /** Interface to bind. Default `127.0.0.1`. Anything but loopback requires `token`. */
  host?: string;
  /** Port; 0 picks a free one. Default 8765. */
  port?: number;
}

/** A listening server. `close()` ends WebSocket sessions, stops listening and closes cached readers. */
export interface RunningServer {
  readonly port: number;
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Which adapter is serving: `node`, `bun` or `deno`. */
  readonly runtime: 'node' | 'bun' | 'deno';
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What every runtime adapter implements: start the app on host:port. */
export type Adapter = (options: ServeOptions & { host: string; port: number }) => Promise<RunningServer>;

/** What a listener gives the app it serves: that runtime's WebSockets and the `Host` names of the bound address. */
export interface RuntimeSupport {
  websocket: WebSocketSupport;
  boundHosts: () => HostName[];
}

/**
 * An app a listener can serve (a hono app plus `close`): `fetch`, called unbound with the runtime's own extra arguments
 * (node-server's `{ incoming, outgoing }`, which node-ws reads), hono's `request` (Node routes upgrades through it).
 */
export interface ServedApp {
  // biome-ignore lint/suspicious/noExplicitAny: each runtime passes its own bindings through to hono untouched
  fetch: (request: Request, ...runtimeArgs: any[]) => Response | Promise<Response>;
  request(input: string | URL | Request, init?: RequestInit, env?: object): Response | Promise<Response>;
  /** Called first by `RunningServer.close()`: end the app's sessions before the listener stops. */
  close(): Promise<void>;
}

/** Where and how long: the address to bind and, for runtimes that close idle connections, the longest answer. */
export interface ListenOptions {
  host: string;
  port: number;
  /** The longest an HTTP answer may take (ms); Bun's idle timeout is set above it. */
  requestMs?: number;
}

/** The listener options of the bag API's serve options. */
export function listenOptionsOf(options: ServeOptions & { host: string; port: number }): ListenOptions {
  const requestMs = options.deadlines?.requestMs;
  return { host: options.host, port: options.port, ...(requestMs === undefined ? {} : { requestMs }) };
}

/** What every runtime's listener implements: build the app with the runtime's support and serve it. */
export type Listener = (
  build: (runtime: RuntimeSupport) => ServedApp,
  options: ListenOptions,
) => Promise<RunningServer>;

export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Interface addresses are read again at most this often (a laptop changes networks). */
const INTERFACES_TTL_MS = 30_000;

/**
 * The `Host` values a server bound to `host` answers to, on the port it got: for loopback the loopback names, for a
 * wildcard address (`0.0.0.0`, `::`) every interface address and this machine's name, else the address itself.
 * Anything else in a `Host` header is a name the server was not asked to serve (a DNS-rebinding page, a misdirected
 * proxy) and is refused unless `allowHosts` lists it.
 */
export function boundHostNames(host: string, port: () => number): () => HostName[] {
  const bare = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  const literal = bare.includes(':') ? `[${bare}]` : bare;
  const loopback = ['localhost', '127.0.0.1', '[::1]'];
  let cached: { names: string[]; at: number } | undefined;
  const names = (): string[] => {
    if (isLoopbackHost(bare)) return [...new Set([literal, ...loopback])];
    if (bare !== '0.0.0.0' && bare !== '::' && bare !== '') return [literal];
    const now = Date.now();
    if (!cached || now - cached.at > INTERFACES_TTL_MS) {
      const found = new Set([...loopback]);
      for (const list of Object.values(networkInterfaces()))
        for (const address of list ?? []) {
          const ip = address.address.toLowerCase().replace(/%.*$/, '');
          found.add(address.family === 'IPv6' || ip.includes(':') ? `[${ip}]` : ip);
        }
      const machine = hostname().toLowerCase();
      if (machine) found.add(machine).add(`${machine}.local`);
      cached = { names: [...found], at: now };
    }
    return cached.names;
  };
  return () => names().map((name) => ({ name, port: port() }));
}
