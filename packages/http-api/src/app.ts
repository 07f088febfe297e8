import { availableParallelism, cpus } from 'node:os';
import { OpenAPIHono } from '@hono/zod-openapi';
// Importing the umbrella registers the .vdb and .vcap backends, so the server serves them out of the box.
import { BagError, findBackend, registeredExtensions } from '@vlink/bag';
import type { WSContext } from 'hono/ws';
import { registerDensity } from './density/density-route.js';
import { bearerAuth } from './http/auth.js';
import { corsAnyOrigin, corsMiddleware, corsOrigins, type CorsOptions } from './http/cors.js';
import { DOCS_HTML } from './http/docs-page.js';
import { headRequests } from './http/head-requests.js';
import { badParameter, pathScrubber, toErrorResponse } from './http/errors.js';
import { normalizeOrigin, parseHostName, requestGuard, type HostName } from './http/guard.js';
import { healthRoute } from './http/routes.js';
import { documentWebSockets } from './http/ws-docs.js';
import { registerUpload } from './upload/upload-route.js';
import { isPlayerPath, registerPlayer } from './player/player-assets.js';
import { BagPool } from './pool/bag-pool.js';
import { PooledBagWork } from './pool/pooled-work.js';
import type { BackendModule } from './pool/protocol.js';
import type { LakeServerOptions } from './lake/lake-options.js';
import { registerAlignRoute } from './routes/align-route.js';
import { registerBagRoutes } from './routes/bag-routes.js';
import { registerQueryRoute } from './routes/query-route.js';
import { registerSocketRoutes } from './routes/socket-routes.js';
import { placeOf } from './store/bag-place.js';
import { BagStore } from './store/bag-store.js';
import { SERVER_VERSION } from './version.js';
import { LocalBagWork } from './work/local-work.js';
import { DEFAULT_DEADLINES, DEFAULT_LIMITS, type Deadlines, type WorkLimits } from './work/limits.js';
import { RoutedWork } from './work/routed-work.js';
import type { WebSocketSupport } from './ws/socket.js';

export interface AppOptions {
  /**
   * Directory whose bags are served (recursively), or a url prefix of a registered scheme (`s3://bucket/prefix`, with
   * `registerS3()` of `@vlink/bag-s3`). Nothing outside it is reachable.
   */
  root: string;
  /** When set, every route but `/v1/health` (and the static docs page) needs `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * CORS: off by default. `true` answers the `allowOrigins` (any origin only when a token is set); a string or list
   * names the origins; or hono's cors options.
   */
  cors?: boolean | string | string[] | CorsOptions;
  /**
   * Browser origins, besides the server's own, that may call the API and open its WebSockets (e.g.
   * `https://app.foxglove.dev` for Foxglove Studio in a browser). Requests from any other origin are refused (403).
   */
  allowOrigins?: string[];
  /**
   * Host names the server answers to (`Host` header), as `name` (any port) or `name:port`, besides its own address
   * when started by `serve()`. Other hosts are refused (421), which stops DNS-rebinding pages. Without `serve()` and
   * without this option the Host is not checked (the embedding server decides).
   */
  allowHosts?: string[];
  /** Reported by `/v1/health`; defaults to this package's version. */
  version?: string;
  /** Bags whose readers/info are kept open (LRU), per worker; 0 opens a reader per request. Default 16. */
  readerCache?: number;
  /**
   * Worker threads doing the bag work (opening, reading, decoding) off the event loop. Default: the number of cores
   * (at most 8); 0 does it on the server's own thread.
   */
  workers?: number;
  /** How long bag work may take (ms); see `Deadlines`. */
  deadlines?: Partial<Deadlines>;
  /** Size limits of answers and decoding; see `WorkLimits`. */
  limits?: Partial<WorkLimits>;
  /**
   * A catalog and/or export folder to answer SQL over (`POST /v1/query`, DuckDB via @vlink/bag-lake, loaded on the
   * first query). Without it the route does not exist.
   */
  lake?: LakeServerOptions;
  /** Provided by the runtime adapters (`serve()` does it); without it the WebSocket routes answer 501. */
  websocket?: WebSocketSupport;
  /** Provided by `serve()`: the names of the address it listens on (checked against `Host`). */
  boundHosts?: () => readonly HostName[];
}

/** The Hono app plus `close()`, which ends live WebSocket sessions and closes cached readers. */
export type BagApp = OpenAPIHono & { close(): Promise<void>; [Symbol.asyncDispose](): Promise<void> };

/**
 * Builds the web-standard app (Request → Response) over a directory of bags. Runtime-neutral: run it with `serve()`
 * or pass `app.fetch` to any server; WebSockets need the adapter's `websocket` support.
 */
export function createApp(options: AppOptions): BagApp {
  const place = placeOf(options.root);
  const realRoot = place.root;
  if (options.token !== undefined && options.token.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'token must not be empty');
  const limits: WorkLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const deadlines: Deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
  const readerCache = options.readerCache ?? 16;
  const store = new BagStore(place, {
    cacheSize: readerCache,
    decode: { maxBytes: limits.maxDecodeBytes, maxDepth: limits.maxDecodeDepth },
  });
  const pool = new BagPool(place.inWorkers ? (options.workers ?? defaultWorkers()) : 0, () => ({
    k: 'init',
    root: realRoot,
    backends: workerBackends(),
    limits,
    readerCache,
  }));
  const work = new RoutedWork(
    new LocalBagWork(store, limits),
    new PooledBagWork(pool, deadlines),
    (extension) => pool.available && !pool.unavailable.has(extension),
  );
  const version = options.version ?? SERVER_VERSION;
  const sockets = new Set<WSContext<unknown>>();
  const scrub = pathScrubber(realRoot);

  const app = new OpenAPIHono({
    defaultHook: (result) => {
      if (result.success) return;
      const issue = result.error.issues[0];
      const name = issue?.path.length ? String(issue.path[0]) : result.target;
      throw badParameter(name, issue?.message ?? 'invalid');
    },
  });

  app.onError((error, c) => {
    const { status, body } = toErrorResponse(error, scrub);
    return c.json(body, status as 400);
  });
  app.notFound((c) =>
    c.json({ error: { code: 'ROUTE_NOT_FOUND', message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );

  app.use('*', headRequests());
  // Who may ask: the Host and Origin checks first, then CORS (which answers preflights), then the token.
  const allowOrigins = [...(options.allowOrigins ?? []), ...corsOrigins(options.cors)];
  const origins = new Set<string>();
  for (const origin of allowOrigins) {
    const normalized = normalizeOrigin(origin);
    if (normalized === undefined) throw new BagError('INVALID_ARGUMENT', `not an origin: ${JSON.stringify(origin)}`);
    origins.add(normalized);
  }
  const extraHosts = (options.allowHosts ?? []).map((text) => {
    try {
      return parseHostName(text);
    } catch {
      throw new BagError('INVALID_ARGUMENT', `not a host name: ${JSON.stringify(text)}`);
    }
  });
  const bound = options.boundHosts;
  const hosts = bound ? () => [...bound(), ...extraHosts] : extraHosts.length > 0 ? () => extraHosts : undefined;
  app.use('*', requestGuard({ hosts, origins, anyOrigin: corsAnyOrigin(options.cors, options.allowOrigins ?? []) }));
  const cors = corsMiddleware(options.cors, options.allowOrigins ?? [], options.token !== undefined);
  if (cors) app.use('*', cors);
  if (options.token !== undefined) {
    const auth = bearerAuth(options.token);
    app.use('*', async (c, next) => (c.req.path === '/v1/docs' || isPlayerPath(c.req.path) ? next() : auth(c, next)));
  }

  app.openapi(healthRoute, (c) => c.json({ ok: true as const, version }, 200));
  registerBagRoutes(app, { store, work, scrub, limits });
  registerAlignRoute(app, store);
  registerDensity(app, { store, work, maxCells: limits.maxDensityCells });
  registerSocketRoutes(app, { store, work, websocket: options.websocket, sockets, serverName: `vlink-bag ${version}` });
  // A url root is read-only: no upload route (POST answers 404 ROUTE_NOT_FOUND).
  if (place.writable) registerUpload(app, { root: realRoot, token: options.token });
  const lake =
    options.lake && (options.lake.catalog !== undefined || options.lake.export !== undefined)
      ? registerQueryRoute(app, options.lake)
      : undefined;

  documentWebSockets(app);
  const openapi = () =>
    app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'vlink-bag API',
        version,
        description: 'Read-only HTTP and WebSocket API over a directory of VLink bags (.vdb, .vcap, …).',
      },
      security: options.token === undefined ? [] : [{ bearer: [] }],
    });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.get('/v1/openapi.json', (c) => c.json(openapi()));
  app.get('/openapi.json', (c) => c.json(openapi()));
  app.get('/v1/docs', (c) => c.html(DOCS_HTML));
  // `/` and `/player`: the web player (packages/http-api/player/); `/` falls back to the docs when it is not built.
  registerPlayer(app);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const socket of sockets) {
        try {
          socket.close(1001, 'server shutting down');
        } catch {
          // already closing
        }
      }
      sockets.clear();
      await lake?.close();
      await work.close();
    })());
  return Object.assign(app, { close, [Symbol.asyncDispose]: close });
}

/** One worker per core (the machine's, not the container's quota), at most 8: bag work is CPU and disk bound. */
function defaultWorkers(): number {
  let cores = 1;
  try {
    cores = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;
  } catch {
    // an unusual runtime: one worker still keeps the event loop free
  }
  return Math.max(1, Math.min(8, cores));
}

/** The registered backends a worker can load (`Backend.workerModule`), each with the extensions it serves here. */
function workerBackends(): BackendModule[] {
  const byBackend = new Map<string, BackendModule>();
  for (const extension of registeredExtensions()) {
    const backend = findBackend(`x${extension}`);
    if (!backend?.workerModule) continue;
    const key = `${backend.name}\u0000${backend.workerModule}`;
    const entry = byBackend.get(key) ?? { name: backend.name, module: backend.workerModule, extensions: [] };
    entry.extensions.push(extension);
    byBackend.set(key, entry);
  }
  return [...byBackend.values()];
}
