import { z, type OpenAPIHono } from '@hono/zod-openapi';
import { badParameter, HttpError } from '../http/errors.js';
import { bagJsonRoute } from '../http/bag-json-route.js';
import { messageQuery } from '../http/query.js';
import { msParam, urlParam, urlsParam } from '../http/schemas.js';
import type { BagStore } from '../store/bag-store.js';
import type { BagWork } from '../work/bag-work.js';

export const DEFAULT_BUCKETS = 500;
export const MAX_BUCKETS = 5000;
/** Results kept per app (LRU): a player asks for the same overview each time a bag is opened. */
const CACHE_ENTRIES = 32;
/** …within this many bytes of JSON text in total. */
const CACHE_BYTES = 32 * 1024 * 1024;

const DensityQuery = z.object({
  buckets: z
    .string()
    .regex(/^\d+$/, 'an integer')
    .optional()
    .openapi({
      param: { name: 'buckets', in: 'query' },
      description: `Number of time buckets, 1–${MAX_BUCKETS}; default ${DEFAULT_BUCKETS}`,
    }),
  begin: msParam('begin', 'Window start, ms since recording start; default 0'),
  end: msParam('end', 'Window end, ms since recording start (inclusive); default the last message'),
  urls: urlsParam('Urls to count'),
  url: urlParam('Url to count'),
});

export const DensitySchema = z
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

export const densityRoute = bagJsonRoute({
  path: '/v1/bags/{id}/density',
  summary: 'Messages per url and time bucket (one streaming pass; for timelines)',
  query: DensityQuery,
  answer: { description: 'Counts per url, sorted by url', schema: DensitySchema },
});

/** One computation, shared by identical requests; cancelled when every request waiting for it has gone. */
interface Job {
  readonly result: Promise<string>;
  readonly abort: AbortController;
  waiters: number;
  settled: boolean;
  /** Bytes of the answer once it is there (the cache is bounded by the sum). */
  bytes: number;
}

export interface DensityRouteContext {
  store: BagStore;
  work: BagWork;
  /** Largest `buckets × urls` of one answer. */
  maxCells: number;
}

/**
 * `GET /v1/bags/{id}/density?buckets=&begin=&end=&urls=`: per-url message counts over equal time buckets, so a
 * timeline of a million-message bag costs the browser `urls × buckets` numbers, at most `maxCells` of them (413
 * beyond, before any work; the pass itself also stops when the frames name more urls than the info said). Results
 * (JSON text) are cached per bag version (path, size, mtime) and query, within CACHE_BYTES; concurrent identical
 * requests share one pass, and a pass nobody waits for any more (a player that zoomed on before the answer came)
 * stops reading.
 */
export function registerDensity(app: OpenAPIHono, { store, work, maxCells }: DensityRouteContext): void {
  const cache = new Map<string, Job>();
  const forget = (key: string, job: Job) => cache.get(key) === job && cache.delete(key);
  const trim = () => {
    let total = 0;
    for (const job of cache.values()) total += job.bytes;
    for (const [key, job] of cache) {
      if (cache.size <= CACHE_ENTRIES && total <= CACHE_BYTES) break;
      total -= job.bytes;
      cache.delete(key);
    }
  };
  app.openapi(densityRoute, async (c) => {
    const b = store.resolve(c.req.valid('param').id);
    const q = c.req.valid('query');
    const buckets = q.buckets === undefined ? DEFAULT_BUCKETS : Number(q.buckets);
    if (!(buckets >= 1 && buckets <= MAX_BUCKETS)) throw badParameter('buckets', `an integer in [1, ${MAX_BUCKETS}]`);
    const { urls } = messageQuery({ urls: q.urls, url: q.url });
    const info = await work.info(b);
    const urlCount = urls?.length ?? new Set(info.urls.map((u) => u.url)).size;
    if (urlCount * buckets > maxCells) {
      throw new HttpError(
        'TOO_LARGE',
        `${urlCount} urls × ${buckets} buckets = ${urlCount * buckets} counts, over the limit of ${maxCells}; ask for fewer buckets or name fewer urls`,
      );
    }
    const beginMs = q.begin === undefined ? 0 : Number(q.begin);
    const endMs = q.end === undefined ? Math.max(beginMs, info.totalDuration) : Number(q.end);
    if (endMs < beginMs) throw badParameter('end', 'before begin');
    const key = JSON.stringify([b.path, b.size, b.mtimeMs, buckets, beginMs, endMs, urls ?? null]);
    let job = cache.get(key);
    if (job) {
      cache.delete(key);
    } else {
      const abort = new AbortController();
      const result = work.density(b, { buckets, beginMs, endMs, ...(urls ? { urls } : {}) }, abort.signal);
      const created: Job = { result, abort, waiters: 0, settled: false, bytes: 0 };
      // A failure is not kept: the file may be fixed or finish recording.
      result.then(
        (text) => {
          created.settled = true;
          created.bytes = text.length;
          trim();
        },
        () => {
          created.settled = true;
          forget(key, created);
        },
      );
      job = created;
    }
    cache.set(key, job);
    trim();

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
      return c.body(await current.result, 200, { 'content-type': 'application/json; charset=utf-8' }) as never;
    } finally {
      signal.removeEventListener('abort', leave);
      if (waiting) {
        waiting = false;
        current.waiters--;
      }
    }
  });
}
