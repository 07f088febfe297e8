/**
 * The JSON Schema (draft 2020-12) of the validation report (`BagReport`, format reference §14): `vlink-bag report
 * --json` and `GET /api/v1/bags/{id}/report`. The docs carry the same document as
 * `apps/docs/reference/report.schema.json`; a test keeps the two equal and validates reports against it.
 */
import { num, spread, str } from './schema-parts.js';

const count = { type: 'integer', minimum: 0 };

const histogram = (what: string) => ({
  description: `${what}: counts[i] fell in [edges[i], edges[i+1]) (the last bin holds its upper edge); under/over: outside`,
  oneOf: [
    {
      type: 'object',
      required: ['edges', 'counts', 'under', 'over'],
      additionalProperties: false,
      properties: {
        edges: { type: 'array', items: num, minItems: 2 },
        counts: { type: 'array', items: count, minItems: 1 },
        under: count,
        over: count,
      },
    },
    { type: 'null' },
  ],
});

export const REPORT_JSON_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://vlink-bag.dev/schemas/report-1.json',
  title: 'vlink-bag validation report (vlink-bag report --json, GET /api/v1/bags/{id}/report)',
  type: 'object',
  required: ['semantics', 'path', 'format', 'messageCount', 'streams', 'groups', 'counters', 'errors'],
  additionalProperties: false,
  properties: {
    semantics: { const: 1, description: 'version of these rules; bumped when a field changes meaning' },
    path: str,
    format: str,
    messageCount: count,
    streams: {
      type: 'array',
      description: 'one entry per url AND action',
      items: {
        type: 'object',
        required: ['url', 'action', 'count', 'rateHz', 'intervalUs', 'intervalHistogram', 'time', 'latencyUs'],
        additionalProperties: false,
        properties: {
          url: str,
          action: { enum: ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'] },
          count: { type: 'integer', minimum: 1 },
          rateHz: { type: 'number', minimum: 0 },
          intervalUs: spread('the intervals between consecutive log times'),
          intervalHistogram: histogram('intervals over 0 … 3 × their median'),
          time: {
            enum: ['log', 'publish', 'mixed'],
            description: 'log: no message has a publish time of its own; publish: every one has; mixed: some',
          },
          latencyUs: spread('log time − publish time'),
        },
      },
    },
    groups: {
      type: 'array',
      description: 'urls meant to be simultaneous: publish-time offsets of each member against the reference url',
      items: {
        type: 'object',
        required: ['source', 'reference', 'toleranceUs', 'members'],
        additionalProperties: false,
        properties: {
          source: { enum: ['given', 'shared'], description: 'given by the user, or found by shared publish times' },
          reference: str,
          toleranceUs: { type: 'number', minimum: 0 },
          members: {
            type: 'array',
            items: {
              type: 'object',
              required: ['url', 'matched', 'unmatched', 'exact', 'offsetUs', 'offsetHistogram'],
              additionalProperties: false,
              properties: {
                url: str,
                matched: count,
                unmatched: count,
                exact: count,
                offsetUs: spread('member publish time − nearest reference publish time'),
                offsetHistogram: histogram('offsets over −tolerance … +tolerance'),
              },
            },
          },
        },
      },
    },
    counters: {
      type: 'object',
      description: 'url → cause → count',
      additionalProperties: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
    },
    errors: { type: 'array', items: str },
  },
} as const;
