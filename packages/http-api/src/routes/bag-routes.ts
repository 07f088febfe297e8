import type { OpenAPIHono } from '@hono/zod-openapi';
import { BagError, DEFAULT_GAP_FACTOR } from '@vlink/bag';
import { badParameter, HttpError, toErrorResponse, type PathScrubber } from '../http/errors.js';
import { messageQuery } from '../http/query.js';
import {
  attachmentRoute,
  bagsRoute,
  infoRoute,
  messagesRoute,
  reportRoute,
  schemasRoute,
  timingRoute,
} from '../http/routes.js';
import type { ReportRequest } from '../work/bag-work.js';
import { toBase64 } from '@vlink/bag-decode';
import { BINARY_FRAMES_CONTENT_TYPE } from '@vlink/bag-decode';
import { decodeCursor, sameQuery, type Position } from '../messages/cursor-token.js';
import { BagListing } from '../listing/bag-listing.js';
import type { ListedFacts } from '../listing/summary-cache.js';
import { loudStream } from '../messages/loud-stream.js';
import type { BagStore } from '../store/bag-store.js';
import type { BagWork } from '../work/bag-work.js';
import type { WorkLimits } from '../work/limits.js';

const DEFAULT_PAGE = 1000;
const MAX_PAGE = 10_000;
const JSON_TYPE = 'application/json; charset=utf-8';

export interface BagRouteContext {
  store: BagStore;
  work: BagWork;
  scrub: PathScrubber;
  limits: Pick<WorkLimits, 'maxResponseBytes'>;
}

/**
 * `/v1/bags`, `…/info`, `…/schemas`, `…/attachments/{index}`, `…/timing`, `…/report`, `…/messages`: every answer
 * comes from `work` (a worker, usually).
 */
export function registerBagRoutes(app: OpenAPIHono, { store, work, scrub, limits }: BagRouteContext): void {
  const bag = (id: string) => store.resolve(id);
  const encoder = new TextEncoder();
  const errorLine = (error: unknown) => encoder.encode(`${JSON.stringify(toErrorResponse(error, scrub).body)}\n`);

  // One per app: the message counts it keeps by file version live as long as the server (see BagListing).
  const listing = new BagListing(store.place, async (bags) =>
    (await work.facts(bags)).map(
      (facts): ListedFacts => (facts.error ? { error: toErrorResponse(facts.error, scrub).body.error } : facts),
    ),
  );

  app.openapi(bagsRoute, async (c) => {
    const q = c.req.valid('query');
    const page = await listing.page({
      ...(q.limit === undefined ? {} : { limit: Number(q.limit) }),
      ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
      // No `c.req.raw.signal`: Deno warns on stderr the first time a request's signal is read (its legacy abort), and
      // listing is what every client does first; a listing whose client left finishes and fills the cache.
    });
    return c.json(page as never, 200);
  });

  app.openapi(infoRoute, async (c) => c.json((await work.info(bag(c.req.valid('param').id))) as never, 200));

  app.openapi(schemasRoute, async (c) => {
    const schemas = await work.schemas(bag(c.req.valid('param').id));
    const body = {
      schemas: schemas.map((s) => ({
        name: s.name,
        encoding: s.encoding,
        schemaType: s.schemaType,
        data: toBase64(s.data),
      })),
    };
    return c.json(body, 200);
  });

  app.openapi(attachmentRoute, async (c) => {
    const { id, index } = c.req.valid('param');
    const b = bag(id);
    const meta = (await work.info(b)).attachments?.[Number(index)];
    if (!meta) throw new BagError('NOT_FOUND', `bag ${b.id} has no attachment ${index}`);
    // The whole attachment is read into memory (the backend seam returns it whole): bounded like a JSON answer.
    if (meta.size > limits.maxResponseBytes)
      throw new HttpError(
        'TOO_LARGE',
        `attachment ${index} (${meta.name}) is ${meta.size} bytes, over the ${limits.maxResponseBytes}-byte answer limit`,
      );
    const data = await work.attachment(b, Number(index));
    return c.body(data as never, 200, {
      'content-type': meta.mediaType || 'application/octet-stream',
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(meta.name)}`,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    }) as never;
  });

  app.openapi(timingRoute, async (c) => {
    const b = bag(c.req.valid('param').id);
    const q = c.req.valid('query');
    const factor = q.factor === undefined ? DEFAULT_GAP_FACTOR : Number(q.factor);
    if (!(factor > 0)) throw badParameter('factor', 'a number > 0');
    const { urls } = messageQuery({ urls: q.urls, url: q.url });
    const text = await work.timing(b, urls ? { factor, urls } : { factor }, c.req.raw.signal);
    return c.body(text, 200, { 'content-type': JSON_TYPE }) as never;
  });

  app.openapi(reportRoute, async (c) => {
    const b = bag(c.req.valid('param').id);
    const q = c.req.valid('query');
    const request: ReportRequest = {};
    if (q.group !== undefined)
      request.groups = (Array.isArray(q.group) ? q.group : [q.group]).map((g) =>
        g
          .split(',')
          .map((u) => u.trim())
          .filter((u) => u.length > 0),
      );
    if (q.bins !== undefined) {
      const bins = Number(q.bins);
      if (!(bins >= 1 && bins <= 1000)) throw badParameter('bins', 'an integer 1…1000');
      request.bins = bins;
    }
    if (q.tolerance !== undefined) request.toleranceUs = Number(q.tolerance);
    const text = await work.report(b, request, c.req.raw.signal);
    return c.body(text, 200, { 'content-type': JSON_TYPE }) as never;
  });

  app.openapi(messagesRoute, async (c) => {
    const q = c.req.valid('query');
    const b = bag(c.req.valid('param').id);
    const format = q.format ?? 'json';
    const decode = q.decode === 'true' || q.decode === '1';
    const jsonNames = q.jsonNames === 'true' || q.jsonNames === '1';
    if (decode && format === 'binary') throw badParameter('decode', 'not available with format=binary');
    if (jsonNames && !decode) throw badParameter('jsonNames', 'only with decode=true');
    let query = messageQuery(q);
    let position: Position | undefined;
    if (q.cursor !== undefined) {
      const token = decodeCursor(q.cursor, b.id);
      const explicit =
        q.urls !== undefined ||
        q.url !== undefined ||
        q.begin !== undefined ||
        q.end !== undefined ||
        q.timeBase !== undefined;
      if (explicit && !sameQuery(token.query, query))
        throw badParameter('cursor', 'the token was issued for other urls/begin/end/timeBase');
      query = token.query;
      position = token.position;
    }
    const limit = q.limit === undefined ? undefined : Math.min(MAX_PAGE, Math.max(1, Number(q.limit)));
    const from = position === undefined ? {} : { position };
    if (format === 'json') {
      const text = await work.page(
        b,
        { query, ...from, limit: limit ?? DEFAULT_PAGE, decode, jsonNames },
        c.req.raw.signal,
      );
      return c.body(text, 200, { 'content-type': JSON_TYPE }) as never;
    }
    const source = await work.stream(b, {
      query,
      ...from,
      ...(limit === undefined ? {} : { limit }),
      format,
      decode,
      jsonNames,
    });
    // The first chunk is read here: a bag that fails before any byte gets an error response, not an empty 200.
    const body = await loudStream(source, format === 'ndjson' ? errorLine : undefined);
    const type = format === 'ndjson' ? 'application/x-ndjson; charset=utf-8' : BINARY_FRAMES_CONTENT_TYPE;
    const headers: Record<string, string> = { 'content-type': type, 'cache-control': 'no-store' };
    if (format === 'binary') headers['x-vlink-frame-layout'] = '1';
    return c.body(body, 200, headers) as never;
  });
}
