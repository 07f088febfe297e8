import { createRoute, z } from '@hono/zod-openapi';
import { BINARY_FRAMES_CONTENT_TYPE } from '@vlink/bag-decode';
import {
  AttachmentParams,
  BagListQuery,
  BagListSchema,
  HealthSchema,
  IdParams,
  InfoSchema,
  MessagePageSchema,
  MessagesQuery,
  SchemaListSchema,
  TimingQuery,
  TimingSchema,
} from './schemas.js';
import { ReportQuery, ReportSchema } from './report-schemas.js';
import { bagErrorResponses, errorResponses } from './error-responses.js';
import { bagJsonRoute } from './bag-json-route.js';

const bagErrors = bagErrorResponses;

export const healthRoute = createRoute({
  method: 'get',
  path: '/v1/health',
  summary: 'Liveness and version (no auth)',
  security: [],
  responses: { 200: { description: 'OK', content: { 'application/json': { schema: HealthSchema } } } },
});

export const bagsRoute = createRoute({
  method: 'get',
  path: '/v1/bags',
  summary: 'Every supported bag under the root, recursively; paged with `limit` and `cursor`',
  description:
    'Split recordings are listed by their manifest (.vdbx/.vcapx); their segments are left out.\n' +
    'Bags come in a stable order: by id, folder by folder (a folder’s bags at the place of its name). Without `limit` the answer holds every bag and `next` is null; with it, a page of at most `limit` bags and `next`, the token of the following page (pass it as `cursor`; it resumes after the last id returned, so it survives restarts). Each bag is opened once per file version (size and mtime) for its message count and the answer remembered: a bag that changed is opened again, an unchanged one is not.',
  request: { query: BagListQuery },
  responses: {
    200: { description: 'Bags', content: { 'application/json': { schema: BagListSchema } } },
    ...errorResponses(400, 401, 403, 421),
  },
});

export const infoRoute = bagJsonRoute({
  path: '/v1/bags/{id}/info',
  summary: 'The bag’s Info (as `vlink-bag info --json`)',
  answer: { description: 'Info', schema: InfoSchema },
});

export const schemasRoute = bagJsonRoute({
  path: '/v1/bags/{id}/schemas',
  summary: 'Embedded schemas (FileDescriptorSets, bfbs, …), data base64',
  answer: { description: 'Schemas', schema: SchemaListSchema },
});

export const attachmentRoute = createRoute({
  method: 'get',
  path: '/v1/bags/{id}/attachments/{index}',
  summary: 'The bytes of one attachment of a foreign bag (MCAP), listed in info `attachments`',
  request: { params: AttachmentParams },
  responses: {
    200: {
      description: "The attachment's bytes, with its media type and name (Content-Disposition)",
      content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } },
    },
    ...bagErrors,
  },
});

export const timingRoute = bagJsonRoute({
  path: '/v1/bags/{id}/timing',
  summary: 'Per-url timing: rate, interval percentiles and gaps (core analyzeTiming)',
  query: TimingQuery,
  answer: { description: 'Timing per url, sorted by url', schema: TimingSchema },
});

export const reportRoute = bagJsonRoute({
  path: '/v1/bags/{id}/report',
  summary: 'Validation report: per url and action frequency, interval histogram, time semantics; publish-time offsets',
  description:
    'Core analyzeReport (as `vlink-bag report --json`): one entry per url AND action (rate, interval percentiles and histogram, log/publish time semantics and latency), publish-time offsets of urls meant to be simultaneous (the groups given, or urls sharing publish times), the counters by cause.',
  query: ReportQuery,
  answer: { description: 'The report', schema: ReportSchema },
});

export const messagesRoute = createRoute({
  method: 'get',
  path: '/v1/bags/{id}/messages',
  summary: 'Messages of a window: JSON pages, or NDJSON / binary streams',
  description:
    'format=json: one page `{ messages, next }`; pass `next` as `cursor` for the following page (the token carries the query and survives restarts).\n' +
    'format=ndjson: every message of the window, one JSON object per line (same shape); an error after the first byte ends the body with an `{"error":…}` line.\n' +
    'format=binary: frames back to back, little-endian: u32 headerLen, u32 payloadLen, then the header — i64 timestamp µs, u8 action, u8 schemaType, u16 urlLen, url UTF-8, u16 serLen, ser UTF-8, then (version 2, when the message has one) i64 publishTime µs — then the payload. headerLen = 14 + urlLen + serLen (+ 8 with a publish time); skip unknown trailing header bytes.',
  request: { params: IdParams, query: MessagesQuery },
  responses: {
    200: {
      description: 'A page or a stream',
      content: {
        'application/json': { schema: MessagePageSchema },
        'application/x-ndjson': { schema: z.string().openapi({ description: 'One Message JSON object per line' }) },
        [BINARY_FRAMES_CONTENT_TYPE]: { schema: z.string().openapi({ format: 'binary' }) },
      },
    },
    ...bagErrors,
  },
});
