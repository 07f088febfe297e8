import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  ALIGN_FORMATS,
  type AlignBase,
  type AlignFormat,
  type AlignOptions,
  alignChunks,
  MATCH_POLICIES,
  MISSING_POLICIES,
  type MatchPolicy,
  type MissingPolicy,
} from '@vlink/bag-align';
import { badParameter } from '../http/errors.js';
import { IdParams } from '../http/schemas.js';
import { bagErrorResponses, errorResponses } from '../http/error-responses.js';
import type { BagStore } from '../store/bag-store.js';

const CONTENT_TYPE: Record<AlignFormat, string> = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

const inQuery = (name: string, description: string) => ({ param: { name, in: 'query' as const }, description });

export const AlignQuery = z.object({
  base: z.string().openapi(inQuery('base', 'The base timeline: a url (one row per message) or a rate in Hz (`30hz`)')),
  timeBase: z.enum(['log', 'publish']).optional().openapi(inQuery('timeBase', '`log` (default) or `publish`')),
  match: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      ...inQuery(
        'match',
        `\`url=policy\` (${MATCH_POLICIES.join(', ')}): repeat or separate with commas; default every data url`,
      ),
      type: 'string',
    }),
  defaultMatch: z
    .enum(MATCH_POLICIES as unknown as [MatchPolicy, ...MatchPolicy[]])
    .optional()
    .openapi(inQuery('defaultMatch', 'Policy of urls without one (default nearest)')),
  tolerance: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'a number of ms ≥ 0')
    .optional()
    .openapi(inQuery('tolerance', 'Largest distance to a matched sample, ms (default none)')),
  missing: z
    .enum(MISSING_POLICIES as unknown as [MissingPolicy, ...MissingPolicy[]])
    .optional()
    .openapi(inQuery('missing', '`null` (default), `ffill` or `drop`')),
  format: z
    .enum(ALIGN_FORMATS as unknown as [AlignFormat, ...AlignFormat[]])
    .optional()
    .openapi(inQuery('format', '`parquet` (default), `csv` or `ndjson`')),
});

export const alignRoute = createRoute({
  method: 'get',
  path: '/v1/bags/{id}/align',
  summary: 'The bag’s urls aligned onto one timeline, decoded into columns: Parquet, CSV or NDJSON (streamed)',
  description:
    'As `vlink-bag align` (see the alignment guide). The body streams as it is made; Parquet keeps the JSON description of the columns, parameters and counts in its footer (key `vlink.align`). An error before the first byte is an error response; after it the connection is closed before the end of the body.',
  request: { params: IdParams, query: AlignQuery },
  responses: {
    200: {
      description: 'The aligned rows',
      content: Object.fromEntries(
        ALIGN_FORMATS.map((f) => [CONTENT_TYPE[f], { schema: z.string().openapi({ format: 'binary' }) }]),
      ),
    },
    ...bagErrorResponses,
    ...errorResponses(501),
  },
});

function baseOf(text: string): AlignBase {
  const rate = /^\s*(\d+(?:\.\d+)?)\s*(?:hz)?\s*$/i.exec(text);
  return rate ? { rateHz: Number(rate[1]) } : { url: text };
}

function matchesOf(value: string | string[] | undefined, fallback: MatchPolicy): Record<string, MatchPolicy> {
  const items = (Array.isArray(value) ? value : value === undefined ? [] : [value])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const out: Record<string, MatchPolicy> = {};
  for (const item of items) {
    const at = item.lastIndexOf('=');
    const policy = at < 0 ? fallback : item.slice(at + 1);
    if (!(MATCH_POLICIES as readonly string[]).includes(policy)) {
      throw badParameter('match', `url=policy with a policy of ${MATCH_POLICIES.join(', ')}`);
    }
    out[at < 0 ? item : item.slice(0, at)] = policy as MatchPolicy;
  }
  return out;
}

/**
 * `GET /v1/bags/{id}/align`: runs the alignment on the request thread with a reader leased from the store, and
 * streams its bytes (memory: one row group). The reader goes back when the body ends or the client goes away.
 */
export function registerAlignRoute(app: OpenAPIHono, store: BagStore): void {
  app.openapi(alignRoute, async (c) => {
    const q = c.req.valid('query');
    const b = store.resolve(c.req.valid('param').id);
    const format = q.format ?? 'parquet';
    const defaultMatch = q.defaultMatch ?? 'nearest';
    const options: AlignOptions = {
      base: baseOf(q.base),
      timeBase: q.timeBase ?? 'log',
      match: matchesOf(q.match, defaultMatch),
      defaultMatch,
      missing: q.missing ?? 'null',
      ...(q.tolerance === undefined ? {} : { toleranceUs: Number(q.tolerance) * 1000 }),
      signal: c.req.raw.signal,
      // the description (in the Parquet footer) names the bag by its id: server paths never leave the server
      bagName: b.id,
    };
    const lease = await store.lease(b);
    const chunks = alignChunks(lease.reader, options, format);
    let first: IteratorResult<Uint8Array, unknown>;
    try {
      // the plan (options, urls, first messages) is checked before the response exists: its errors are responses
      first = await chunks.next();
    } catch (error) {
      lease.release();
      throw error;
    }
    let done = false;
    // a reader left mid-read (an error, a client gone) is closed rather than pooled
    const finish = (reuse = false) => {
      if (done) return;
      done = true;
      lease.release(reuse);
    };
    const body = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          if (first.done) {
            finish(true);
            controller.close();
          } else controller.enqueue(first.value);
        },
        async pull(controller) {
          try {
            const next = await chunks.next();
            if (next.done) {
              finish(true);
              controller.close();
            } else controller.enqueue(next.value);
          } catch (error) {
            finish();
            // a failure after the first byte: the body ends early (never a truncated body that looks complete)
            controller.error(new Error(`alignment failed (${(error as { code?: string }).code ?? 'INTERNAL'})`));
          }
        },
        async cancel() {
          // The alignment's read ends first: a reader closed under a running query fails (SQLite: "busy").
          await chunks.return(undefined as never).catch(() => undefined);
          finish();
        },
      },
      { highWaterMark: 0 },
    );
    return c.body(body, 200, { 'content-type': CONTENT_TYPE[format], 'cache-control': 'no-store' }) as never;
  });
}
