import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { badParameter } from '../http/errors.js';
import { messageQuery } from '../http/query.js';
import { ErrorSchema, IdParams } from '../http/schemas.js';
import type { BagStore } from '../store/bag-store.js';
import { computeDensity, type Density } from './density.js';

export const DEFAULT_BUCKETS = 500;
export const MAX_BUCKETS = 5000;
/** Results kept per app (LRU): a player asks for the same overview each time a bag is opened. */
const CACHE_ENTRIES = 32;

const msNumber = /^\d+(\.\d+)?$/;
const DensityQuery = z.object({
  buckets: z
    .string()
    .regex(/^\d+$/, 'an integer')
    .optional()
    .openapi({
      param: { name: 'buckets', in: 'query' },
      description: `Number of time buckets, 1–${MAX_BUCKETS}; default ${DEFAULT_BUCKETS}`,
    }),
  begin: z
    .string()
    .regex(msNumber, 'a number of ms ≥ 0')
    .optional()
    .openapi({
      param: { name: 'begin', in: 'query' },
      description: 'Window start, ms since recording start; default 0',
    }),
  end: z
    .string()
    .regex(msNumber, 'a number of ms ≥ 0')
    .optional()
    .openapi({
      param: { name: 'end', in: 'query' },
      description: 'Window end, ms since recording start (inclusive); default the last message',
    }),
  urls: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      param: { name: 'urls', in: 'query' },
      description: 'Urls to count: repeat or separate with commas; default all',
      type: 'string',
    }),
});

const DensitySchema = z
  .object({
    beginMs: z.number(),
    endMs: z.number(),
    buckets: z.number().int(),
    bucketMs: z.number().openapi({
      description: 'Bucket i covers [beginMs + i·bucketMs, beginMs + (i+1)·bucketMs); the last one includes endMs',
    }),
    total: z.number().int(),
    urls: z.array(
      z.object({ url: z.string(), count: z.number().int(), max: z.number().int(), counts: z.array(z.number().int()) }),
    ),
  })
  .openapi('Density');

const errorContent = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorSchema } },
});

export const densityRoute = createRoute({
  method: 'get',
  path: '/v1/bags/{id}/density',
  summary: 'Messages per url and time bucket (one streaming pass; for timelines)',
  request: { params: IdParams, query: DensityQuery },
  responses: {
    200: { description: 'Counts per url, sorted by url', content: { 'application/json': { schema: DensitySchema } } },
    400: errorContent('Malformed parameter (the message names it)'),
    401: errorContent('Missing or wrong bearer token'),
    404: errorContent('No such bag under the root (also for paths leaving the root)'),
    415: errorContent('Not a supported bag format'),
    422: errorContent('Corrupt or incompatible bag'),
  },
});

/** One computation, shared by identical requests; cancelled when every request waiting for it has gone. */
interface Job {
  readonly result: Promise<Density>;
  readonly abort: AbortController;
  waiters: number;
  settled: boolean;
}

/**
 * `GET /v1/bags/{id}/density?buckets=&begin=&end=&urls=`: per-url message counts over equal time buckets, so a
 * timeline of a million-message bag costs the browser `urls × buckets` numbers. Results are cached per bag version
 * (path, size, mtime) and query; concurrent identical requests share one pass, and a pass nobody waits for any more
 * (a player that zoomed on before the answer came) stops reading.
 */
export function registerDensity(app: OpenAPIHono, store: BagStore): void {
  const cache = new Map<string, Job>();
  const forget = (key: string, job: Job) => cache.get(key) === job && cache.delete(key);
  app.openapi(densityRoute, async (c) => {
    const b = store.resolve(c.req.valid('param').id);
    const q = c.req.valid('query');
    const buckets = q.buckets === undefined ? DEFAULT_BUCKETS : Number(q.buckets);
    if (!(buckets >= 1 && buckets <= MAX_BUCKETS)) throw badParameter('buckets', `an integer in [1, ${MAX_BUCKETS}]`);
    const { urls } = messageQuery({ urls: q.urls });
    const info = await store.info(b);
    const beginMs = q.begin === undefined ? 0 : Number(q.begin);
    const endMs = q.end === undefined ? Math.max(beginMs, info.totalDuration) : Number(q.end);
    if (endMs < beginMs) throw badParameter('end', 'before begin');
    const key = JSON.stringify([b.path, b.size, b.mtimeMs, buckets, beginMs, endMs, urls ?? null]);
    let job = cache.get(key);
    if (job) {
      cache.delete(key);
    } else {
      const abort = new AbortController();
      const result = store.withReader(b, (reader) =>
        computeDensity(reader, { buckets, beginMs, endMs, signal: abort.signal, ...(urls ? { urls } : {}) }),
      );
      const created: Job = { result, abort, waiters: 0, settled: false };
      // A failure is not kept: the file may be fixed or finish recording.
      result.then(
        () => (created.settled = true),
        () => {
          created.settled = true;
          forget(key, created);
        },
      );
      job = created;
    }
    cache.set(key, job);
    while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);

    const current = job;
    current.waiters++;
    let waiting = true;
    const leave = () => {
      if (!waiting) return;
      waiting = false;
      if (--current.waiters === 0 && !current.settled) {
        current.abort.abort();
        forget(key, current);
      }
    };
    const signal = c.req.raw.signal;
    signal.addEventListener('abort', leave, { once: true });
    try {
      return c.json((await current.result) as never, 200);
    } finally {
      signal.removeEventListener('abort', leave);
      if (waiting) {
        waiting = false;
        current.waiters--;
      }
    }
  });
}
