import { z } from '@hono/zod-openapi';
import { decimalParam } from './schemas.js';

/** `GET /v1/bags/{id}/report`: the query and the answer (core's `BagReport`; JSON Schema in the CLI reference). */
export const ReportQuery = z.object({
  group: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      param: { name: 'group', in: 'query' },
      description:
        'Urls meant to be simultaneous, comma-separated, the first the reference; repeat for more groups. Default: urls that share publish times',
      type: 'string',
    }),
  bins: z
    .string()
    .regex(/^\d+$/, 'an integer')
    .optional()
    .openapi({ param: { name: 'bins', in: 'query' }, description: 'Histogram bins, 1…1000 (default 30)' }),
  tolerance: decimalParam(
    'tolerance',
    "Offset (µs) within which a member's message matches the reference (default half its period)",
    'a number ≥ 0',
  ),
});

const spread = z.object({ min: z.number(), p50: z.number(), p99: z.number(), max: z.number() }).nullable();
const histogram = z
  .object({ edges: z.array(z.number()), counts: z.array(z.number()), under: z.number(), over: z.number() })
  .nullable()
  .openapi({ description: 'counts[i] fell in [edges[i], edges[i+1]); under/over: outside the edges' });

export const ReportSchema = z
  .object({
    semantics: z.literal(1),
    path: z.string().openapi({ description: 'the bag id' }),
    format: z.string(),
    messageCount: z.number(),
    streams: z.array(
      z.object({
        url: z.string(),
        action: z.string(),
        count: z.number(),
        rateHz: z.number(),
        intervalUs: spread,
        intervalHistogram: histogram,
        time: z.enum(['log', 'publish', 'mixed']),
        latencyUs: spread,
      }),
    ),
    groups: z.array(
      z.object({
        source: z.enum(['given', 'shared']),
        reference: z.string(),
        toleranceUs: z.number(),
        members: z.array(
          z.object({
            url: z.string(),
            matched: z.number(),
            unmatched: z.number(),
            exact: z.number(),
            offsetUs: spread,
            offsetHistogram: histogram,
          }),
        ),
      }),
    ),
    counters: z.record(z.string(), z.record(z.string(), z.number())),
    errors: z.array(z.string()),
  })
  .openapi('Report');
