import { realpathSync, statSync } from 'node:fs';
import { OpenAPIHono } from '@hono/zod-openapi';
// Importing the umbrella registers the .vdb and .vcap backends, so the server serves them out of the box.
import { BagError, DEFAULT_GAP_FACTOR, analyzeTiming, extensionOf } from '@vlink/bag';
import type { WSContext } from 'hono/ws';
import { bearerAuth } from './http/auth.js';
import { cors, type CorsOptions } from './http/cors.js';
import { DOCS_HTML } from './http/docs-page.js';
import { HttpError, badParameter, toErrorResponse } from './http/errors.js';
import { bagsRoute, healthRoute, infoRoute, messagesRoute, schemasRoute, timingRoute } from './http/routes.js';
import { messageQuery, optionalNumber } from './http/query.js';
import { documentWebSockets } from './http/ws-docs.js';
import { registerDensity } from './density/density-route.js';
import { registerUpload } from './upload/upload-route.js';
import { isPlayerPath, registerPlayer } from './player/player-assets.js';
import { toBase64 } from './messages/base64.js';
import { BINARY_FRAMES_CONTENT_TYPE } from './messages/binary-frame.js';
import { decodeCursor, encodeCursor, sameQuery, type Position } from './messages/cursor-token.js';
import { FrameJson, type MessageJson } from './messages/frame-json.js';
import { binaryStream, ndjsonStream } from './messages/frame-stream.js';
import { QueryCursor } from './messages/query-cursor.js';
import { replaySocket } from './replay/replay-socket.js';
import type { ReplaySource } from './replay/replay-session.js';
import { assertFoxgloveProtocol, foxgloveSocket } from './foxglove/foxglove-socket.js';
import { BagStore } from './store/bag-store.js';
import { findBags } from './store/list-bags.js';
import type { ResolvedBag } from './store/resolve-id.js';
import { SERVER_VERSION } from './version.js';
import { defaultBufferedAmount, type WebSocketSupport } from './ws/socket.js';

export interface AppOptions {
  /** Directory whose bags are served (recursively). Nothing outside it is reachable. */
  root: string;
  /** When set, every route but `/v1/health` (and the static docs page) needs `Authorization: Bearer <token>`. */
  token?: string;
  /** CORS: off by default; `true` allows any origin; a string or list allows those origins; or hono's cors options. */
  cors?: boolean | string | string[] | CorsOptions;
  /** Reported by `/v1/health`; defaults to this package's version. */
  version?: string;
  /** Bags whose readers/info are kept open (LRU); 0 opens a reader per request. Default 16. */
  readerCache?: number;
  /** Provided by the runtime adapters (`serve()` does it); without it the WebSocket routes answer 501. */
  websocket?: WebSocketSupport;
}

/** The Hono app plus `close()`, which ends live WebSocket sessions and closes cached readers. */
export type BagApp = OpenAPIHono & { close(): Promise<void>; [Symbol.asyncDispose](): Promise<void> };

const DEFAULT_PAGE = 1000;
/** A JSON page is built in memory: it also ends once it holds this much payload (the `next` token continues). */
const PAGE_PAYLOAD_BYTES = 8 * 1024 * 1024;
const MAX_PAGE = 10_000;
const LIST_CONCURRENCY = 8;

/**
 * Builds the web-standard app (Request → Response) over a directory of bags. Runtime-neutral: run it with `serve()`
 * or pass `app.fetch` to any server; WebSockets need the adapter's `websocket` support.
 */
export function createApp(options: AppOptions): BagApp {
  const realRoot = realRootOf(options.root);
  const store = new BagStore(realRoot, options.readerCache === undefined ? {} : { cacheSize: options.readerCache });
  const version = options.version ?? SERVER_VERSION;
  const sockets = new Set<WSContext<unknown>>();
  const scrub = (text: string) => text.split(`${realRoot}/`).join('').split(realRoot).join('.');

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

  const corsOption = options.cors;
  if (corsOption !== undefined && corsOption !== false) app.use('*', cors(corsOption));
  if (options.token !== undefined) {
    if (options.token.length === 0) throw new BagError('INVALID_ARGUMENT', 'token must not be empty');
    const auth = bearerAuth(options.token);
    app.use('*', async (c, next) => (c.req.path === '/v1/docs' || isPlayerPath(c.req.path) ? next() : auth(c, next)));
  }

  const bag = (id: string) => store.resolve(id);

  app.openapi(healthRoute, (c) => c.json({ ok: true as const, version }, 200));

  app.openapi(bagsRoute, async (c) => {
    const bags = await findBags(realRoot);
    const out: Array<Record<string, unknown>> = new Array(bags.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < bags.length; i = next++) out[i] = await summary(bags[i]!);
    };
    await Promise.all(Array.from({ length: Math.min(LIST_CONCURRENCY, bags.length) }, worker));
    return c.json({ bags: out } as never, 200);
  });

  async function summary(b: ResolvedBag): Promise<Record<string, unknown>> {
    const base = {
      id: b.id,
      format: extensionOf(b.path).slice(1),
      size: b.size,
      modified: new Date(b.mtimeMs).toISOString(),
    };
    try {
      const info = await store.info(b);
      return { ...base, size: Math.max(b.size, info.fileSize || 0), messageCount: info.messageCount };
    } catch (error) {
      return { ...base, messageCount: null, error: toErrorResponse(error, scrub).body.error };
    }
  }

  app.openapi(infoRoute, async (c) => c.json((await store.info(await bag(c.req.valid('param').id))) as never, 200));

  app.openapi(schemasRoute, async (c) => {
    const schemas = await store.schemas(await bag(c.req.valid('param').id));
    return c.json(
      {
        schemas: schemas.map((s) => ({
          name: s.name,
          encoding: s.encoding,
          schemaType: s.schemaType,
          data: toBase64(s.data),
        })),
      },
      200,
    );
  });

  app.openapi(timingRoute, async (c) => {
    const b = await bag(c.req.valid('param').id);
    const q = c.req.valid('query');
    const factor = q.factor === undefined ? DEFAULT_GAP_FACTOR : Number(q.factor);
    if (!(factor > 0)) throw badParameter('factor', 'a number > 0');
    const { urls } = messageQuery({ urls: q.urls });
    const timing = await store.withReader(b, (reader) =>
      analyzeTiming(reader, urls ? { factor, filterUrls: urls } : { factor }),
    );
    return c.json({ factor, urls: timing } as never, 200);
  });

  app.openapi(messagesRoute, async (c) => {
    const q = c.req.valid('query');
    const b = await bag(c.req.valid('param').id);
    const format = q.format ?? 'json';
    const decode = q.decode === 'true' || q.decode === '1';
    if (decode && format === 'binary') throw badParameter('decode', 'not available with format=binary');
    let query = messageQuery(q);
    let position: Position | undefined;
    if (q.cursor !== undefined) {
      const token = decodeCursor(q.cursor, b.id);
      const explicit = q.urls !== undefined || q.begin !== undefined || q.end !== undefined;
      if (explicit && !sameQuery(token.query, query))
        throw badParameter('cursor', 'the token was issued for other urls/begin/end');
      query = token.query;
      position = token.position;
    }
    const limit =
      q.limit === undefined
        ? format === 'json'
          ? DEFAULT_PAGE
          : undefined
        : Math.min(MAX_PAGE, Math.max(1, Number(q.limit)));
    const json = new FrameJson(decode ? await store.decoder(b) : undefined);
    const lease = await store.lease(b);
    let cursor: QueryCursor;
    try {
      cursor = new QueryCursor(lease.reader, query, position);
    } catch (error) {
      lease.release();
      throw error;
    }
    if (format === 'json') {
      try {
        const messages: MessageJson[] = [];
        let bytes = 0;
        let exhausted = false;
        while (messages.length < limit! && bytes < PAGE_PAYLOAD_BYTES) {
          const frame = await cursor.next();
          if (!frame) {
            exhausted = true;
            break;
          }
          bytes += frame.data.length;
          messages.push(json.object(frame));
        }
        const more = !exhausted && (await cursor.hasMore());
        const next = more ? encodeCursor(b.id, query, cursor.position()) : null;
        return c.json({ messages, next } as never, 200);
      } finally {
        await cursor.close().catch(() => undefined);
        lease.release();
      }
    }
    const streamOptions = { lease, cursor, scrub, ...(limit === undefined ? {} : { limit }) };
    if (format === 'ndjson') {
      return c.body(ndjsonStream(streamOptions, json), 200, {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'cache-control': 'no-store',
      }) as never;
    }
    return c.body(binaryStream(streamOptions), 200, {
      'content-type': BINARY_FRAMES_CONTENT_TYPE,
      'x-vlink-frame-layout': '1',
      'cache-control': 'no-store',
    }) as never;
  });

  registerDensity(app, store);
  registerUpload(app, { root: realRoot, token: options.token });

  // WebSockets: the bag is resolved and opened before the upgrade, so a bad id still gets a normal HTTP error.
  const ws = options.websocket;
  const bufferedAmount = ws?.bufferedAmount ?? defaultBufferedAmount;
  const track = (socket: WSContext<unknown>, open: boolean) => (open ? sockets.add(socket) : sockets.delete(socket));
  const replaySource = (b: ResolvedBag): ReplaySource => ({
    lease: () => store.lease(b),
    durationMs: async () => (await store.info(b)).totalDuration,
  });
  const needsUpgrade = (c: { req: { header(name: string): string | undefined } }) => {
    if (!ws) throw new BagError('NOT_SUPPORTED', 'WebSockets need a runtime adapter: start the server with serve()');
    if (c.req.header('upgrade')?.toLowerCase() !== 'websocket')
      throw new HttpError('UPGRADE_REQUIRED', 'this is a WebSocket endpoint');
    return ws;
  };

  app.get('/v1/bags/:id/replay', async (c) => {
    const support = needsUpgrade(c);
    const b = await bag(c.req.param('id'));
    await store.info(b);
    return support.upgradeWebSocket(
      c,
      replaySocket({ source: replaySource(b), bufferedAmount, track }),
      support.upgradeOptions,
    );
  });

  app.get('/v1/bags/:id/foxglove', async (c) => {
    const support = needsUpgrade(c);
    assertFoxgloveProtocol(c.req.header('sec-websocket-protocol'));
    const b = await bag(c.req.param('id'));
    const rate = optionalNumber(c.req.query('rate'), 'rate') ?? 1;
    const beginMs = optionalNumber(c.req.query('begin'), 'begin') ?? 0;
    const endMs = optionalNumber(c.req.query('end'), 'end');
    const loop = c.req.query('loop');
    if (loop !== undefined && !['true', 'false', '1', '0'].includes(loop)) throw badParameter('loop', 'true or false');
    const [info, schemas] = await Promise.all([store.info(b), store.schemas(b)]);
    const events = foxgloveSocket({
      id: b.id,
      info,
      schemas,
      source: replaySource(b),
      rate,
      beginMs,
      loop: loop === 'true' || loop === '1',
      serverName: `vlink-bag ${version}`,
      bufferedAmount,
      track,
      ...(endMs === undefined ? {} : { endMs }),
    });
    return support.upgradeWebSocket(c, events, support.upgradeOptions);
  });

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

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const socket of sockets) {
      try {
        socket.close(1001, 'server shutting down');
      } catch {
        // already closing
      }
    }
    sockets.clear();
    store.close();
  };
  return Object.assign(app, { close, [Symbol.asyncDispose]: close });
}

function realRootOf(root: string): string {
  if (typeof root !== 'string' || root.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'root must be a directory path');
  try {
    const real = realpathSync(root);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
    return real;
  } catch (error) {
    throw new BagError('NOT_FOUND', `root ${root} is not a readable directory`, { cause: error });
  }
}
