import { realpathSync } from 'node:fs';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { BagError } from '@vlink/bag';
import { HttpError } from '../http/errors.js';
import { errorResponses } from '../http/error-responses.js';
import { LAKE_DEFAULTS, type LakeServerOptions, type QueryableLake } from '../lake/lake-options.js';
import { answerQuery } from '../lake/query-answer.js';

export const QueryRequestSchema = z
  .object({
    sql: z.string().min(1).openapi({
      description: 'One SELECT (or EXPLAIN) over the views `bags`, `urls` (catalog) and `messages` (export)',
      example: 'SELECT url, avg(rate_hz) AS mean_rate FROM urls GROUP BY url',
    }),
    limit: z
      .number()
      .int()
      .min(0)
      .optional()
      .openapi({ description: 'Rows to return at most (default 1000; the server caps it, 100 000 by default)' }),
  })
  .openapi('QueryRequest');

export const QueryAnswerSchema = z
  .object({
    columns: z
      .array(z.object({ name: z.string(), type: z.string().openapi({ example: 'TIMESTAMP' }) }))
      .openapi({ description: 'Names and DuckDB types, in order' }),
    rows: z.array(z.array(z.unknown())).openapi({
      description:
        'One array per row in column order; BIGINT as a number when exact (else a decimal string), TIMESTAMP as ISO 8601 UTC with µs, BLOB as base64, STRUCT as an object',
    }),
    truncated: z.boolean().openapi({ description: 'More rows than `limit` were left out' }),
    elapsedMs: z.number(),
  })
  .openapi('QueryAnswer');

export const queryRoute = createRoute({
  method: 'post',
  path: '/v1/query',
  summary: 'SQL over the served catalog and export (DuckDB), as JSON',
  description:
    'Present when the server was started with a catalog and/or an export (`vlink-bag serve --catalog … --export …`). Runs one SELECT with DuckDB in-process; DuckDB may read only the lake’s folders and write nothing. The answer is capped by rows (`limit`), time (503 TIMEOUT) and bytes (413 TOO_LARGE); bad SQL is 400 QUERY_ERROR with DuckDB’s message.',
  request: { body: { content: { 'application/json': { schema: QueryRequestSchema } }, required: true } },
  responses: {
    200: { description: 'The answer', content: { 'application/json': { schema: QueryAnswerSchema } } },
    ...errorResponses(400, 401, 403, 404, 413, 421, 503),
  },
});

/** `@vlink/bag-lake`'s openLake, imported on first use: a server without a lake never loads DuckDB. */
async function defaultOpen(folders: { catalog?: string; export?: string }): Promise<QueryableLake> {
  let lake: { openLake(options: typeof folders): Promise<QueryableLake> };
  try {
    lake = (await import('@vlink/bag-lake' as string)) as typeof lake;
  } catch (error) {
    throw BagError.wrap(error, 'DRIVER_MISSING', 'SQL queries need @vlink/bag-lake installed beside the server');
  }
  return lake.openLake(folders);
}

/**
 * `POST /v1/query`. DuckDB runs the statement on its own threads (the event loop only turns the kept rows into
 * JSON), at most `concurrency` at a time, each interrupted after `timeoutMs` or when the client goes away; the lake
 * is opened on the first query and closed with the app.
 */
export function registerQueryRoute(app: OpenAPIHono, options: LakeServerOptions): { close(): Promise<void> } {
  const limits = { ...LAKE_DEFAULTS, ...definedOf(options) };
  const folders = {
    ...(options.catalog === undefined ? {} : { catalog: options.catalog }),
    ...(options.export === undefined ? {} : { export: options.export }),
  };
  const scrub = folderScrubber(folders);
  const open = options.open ?? defaultOpen;
  let lake: Promise<QueryableLake> | undefined;
  let running = 0;

  app.openapi(queryRoute, async (c) => {
    const body = c.req.valid('json');
    if (body.sql.length > limits.maxSqlLength) {
      throw new HttpError('TOO_LARGE', `the SQL is longer than ${limits.maxSqlLength} characters`);
    }
    const limit = body.limit ?? Math.min(limits.defaultRows, limits.maxRows);
    if (limit > limits.maxRows) {
      throw new BagError('INVALID_ARGUMENT', `limit ${limit} is above this server's ${limits.maxRows} rows`);
    }
    if (running >= limits.concurrency) {
      throw new HttpError('QUEUE_FULL', `${running} queries are running; try again when one has ended`);
    }
    running++;
    try {
      lake ??= open(folders).catch((error: unknown) => {
        lake = undefined;
        throw error;
      });
      const text = await answerQuery(await lake, body.sql, {
        limit,
        timeoutMs: limits.timeoutMs,
        maxAnswerBytes: limits.maxAnswerBytes,
        signal: c.req.raw.signal,
      });
      return c.body(text, 200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      }) as never;
    } catch (error) {
      if (BagError.isInstance(error)) {
        // lake paths never reach a client; a timeout is the HTTP layer's TIMEOUT like the other routes'
        const code = error.code === 'LIMIT_REACHED' ? 'TIMEOUT' : error.code;
        throw new HttpError(code, scrub(error.reason));
      }
      throw error;
    } finally {
      running--;
    }
  });

  return {
    close: async () => {
      const opened = lake;
      lake = undefined;
      if (opened) (await opened.catch(() => undefined))?.close();
    },
  };
}

function definedOf(options: LakeServerOptions): Partial<typeof LAKE_DEFAULTS> {
  return Object.fromEntries(
    Object.entries(options).filter(([key, value]) => key in LAKE_DEFAULTS && value !== undefined),
  ) as Partial<typeof LAKE_DEFAULTS>;
}

/** Replaces the lake folders (as given and resolved) with `<catalog>` / `<export>` in what a client reads. */
function folderScrubber(folders: { catalog?: string; export?: string }): (text: string) => string {
  const pairs: [string, string][] = [];
  for (const [name, dir] of Object.entries(folders)) {
    if (dir === undefined) continue;
    pairs.push([dir, `<${name}>`]);
    try {
      pairs.push([realpathSync(dir), `<${name}>`]);
    } catch {
      // a folder that does not exist: opening the lake says so
    }
  }
  pairs.sort((a, b) => b[0].length - a[0].length);
  return (text) => pairs.reduce((out, [path, name]) => out.split(path).join(name), text);
}
