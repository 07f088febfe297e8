import { createRoute, type z } from '@hono/zod-openapi';
import { bagErrorResponses } from './error-responses.js';
import { IdParams } from './schemas.js';

/**
 * `GET /v1/bags/{id}/…` with a query, answering one JSON document: the bag id parameter and the bag errors (400 …
 * 503) are the same for each, so a route declares only what differs (timing, report, density).
 */
export function bagJsonRoute<Path extends string, Query extends z.ZodObject, Answer extends z.ZodType>(spec: {
  path: Path;
  summary: string;
  description?: string;
  query: Query;
  /** The 200 answer: its description and schema. */
  answer: { description: string; schema: Answer };
}) {
  return createRoute({
    method: 'get',
    path: spec.path,
    summary: spec.summary,
    ...(spec.description === undefined ? {} : { description: spec.description }),
    request: { params: IdParams, query: spec.query },
    responses: {
      200: { description: spec.answer.description, content: { 'application/json': { schema: spec.answer.schema } } },
      ...bagErrorResponses,
    },
  });
}
