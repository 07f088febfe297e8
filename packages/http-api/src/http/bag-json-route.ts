import { createRoute, z } from '@hono/zod-openapi';
import { bagErrorResponses } from './error-responses.js';
import { IdParams } from './schemas.js';

/** The query of a route that takes none: an empty object, which every query string satisfies. */
const NO_QUERY = z.object({});

/**
 * `GET /v1/bags/{id}/…` answering one JSON document: the bag id parameter and the bag errors (400 … 503) are the same
 * for each, so a route declares only what differs (info, schemas, and with a query timing, report, density).
 */
export function bagJsonRoute<
  Path extends string,
  Answer extends z.ZodType,
  Query extends z.ZodObject = typeof NO_QUERY,
>(spec: {
  path: Path;
  summary: string;
  description?: string;
  query?: Query;
  /** The 200 answer: its description and schema. */
  answer: { description: string; schema: Answer };
}) {
  return createRoute({
    method: 'get',
    path: spec.path,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    // Without a query `Query` is NO_QUERY's type (the default): the cast only says so.
    request: { params: IdParams, query: spec.query ?? (NO_QUERY as Query) },
    responses: {
      200: { description: spec.answer.description, content: { 'application/json': { schema: spec.answer.schema } } },
      ...bagErrorResponses,
    },
  });
}
