import { z } from '@hono/zod-openapi';
import { CONTROL_ID_MAX_LENGTH } from '../replay/replay-socket.js';

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z
        .string()
        .openapi({ example: 'NOT_FOUND', description: 'Stable BagError code (or UNAUTHORIZED, ROUTE_NOT_FOUND)' }),
      message: z.string().openapi({ example: 'no such bag "drive.vdb"' }),
    }),
  })
  .openapi('Error');

export const HealthSchema = z.object({ ok: z.literal(true), version: z.string() }).openapi('Health');

export const BagSummarySchema = z
  .object({
    id: z.string().openapi({
      description: 'Path relative to the served root; URL-encode it as one path segment',
      example: 'runs/drive.vdb',
    }),
    format: z.string().openapi({ example: 'vdb' }),
    size: z.number().openapi({ description: 'Bytes on disk (all segments of a split recording when known)' }),
    modified: z.string().openapi({ description: 'ISO 8601 mtime' }),
    messageCount: z.number().nullable(),
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .openapi({ description: 'Present when the bag could not be opened' }),
  })
  .openapi('BagSummary');

export const BagListSchema = z
  .object({
    bags: z.array(BagSummarySchema),
    next: z.string().nullable().openapi({
      description: 'Opaque cursor for the next page (pass it as `cursor`), null at the end (always, without `limit`)',
    }),
  })
  .openapi('BagList');

export const BagListQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,9}$/, 'an integer ≥ 1')
    .optional()
    .openapi({
      param: { name: 'limit', in: 'query' },
      description: 'Bags per page, clamped to [1, 100000]; default every bag (the walk stops at 100,000 files)',
    }),
  cursor: z
    .string()
    .max(8192)
    .optional()
    .openapi({ param: { name: 'cursor', in: 'query' }, description: 'The `next` token of the previous page' }),
});

export const UrlMetaSchema = z
  .object({
    index: z.number(),
    url: z.string(),
    type: z.string(),
    action: z.string().optional(),
    ser: z.string(),
    schemaType: z.number(),
    count: z.number(),
    size: z.number(),
    loss: z.number(),
    freq: z.number(),
    encoding: z.string().optional().openapi({
      description:
        'Foreign formats (and `.vcap` files that declare one): the payload encoding under MCAP’s well-known name (`ros1`, `cdr`, `protobuf`, `json`, …, or the format’s own, e.g. `ulog`)',
    }),
    schemaIndex: z.number().optional().openapi({
      description:
        'Foreign formats whose channels name their own schema (MCAP, ROS 1): its position in the bag’s schemas (`/schemas`), which decides how payloads decode when two schemas share a type name',
    }),
  })
  .openapi('UrlMeta');

export const InfoMetadataSchema = z
  .object({ name: z.string(), values: z.record(z.string(), z.string()) })
  .openapi('InfoMetadata');

export const AttachmentMetaSchema = z
  .object({
    index: z.number().openapi({ description: 'The argument of `/attachments/{index}`' }),
    name: z.string(),
    mediaType: z.string(),
    logTime: z.string().openapi({ description: 'ns since the Unix epoch, decimal (exact)' }),
    createTime: z.string().openapi({ description: 'ns since the Unix epoch, decimal; "0" when unknown' }),
    size: z.number(),
  })
  .openapi('AttachmentMeta');

export const InfoSchema = z
  .object({
    path: z.string().openapi({ description: 'The bag id (server paths are not disclosed)' }),
    format: z.string(),
    version: z.string(),
    storageType: z.string(),
    messageCount: z.number(),
    totalDuration: z.number().openapi({ description: 'ms' }),
    blankDuration: z.number().openapi({ description: 'ms' }),
    timeAccuracy: z.string(),
    compressionType: z.string(),
    processName: z.string(),
    dateTime: z.string(),
    tagName: z.string(),
    hasCompleted: z.boolean(),
    timezone: z.number(),
    startTimestamp: z.number(),
    splitCount: z.number(),
    splitBySize: z.number(),
    splitByTime: z.number(),
    hasSchema: z.boolean(),
    totalRawSize: z.number(),
    fileSize: z.number(),
    urls: z.array(UrlMetaSchema),
    metadata: z.array(InfoMetadataSchema).optional().openapi({
      description:
        'Foreign formats only: the file’s key/value records in file order, after the reader’s description of its header (`mcap.header`, `rosbag2.metadata`, …)',
    }),
    attachments: z
      .array(AttachmentMetaSchema)
      .optional()
      .openapi({ description: 'Foreign formats only: the file’s attachments (MCAP)' }),
    counters: z.record(z.string(), z.record(z.string(), z.number())).optional().openapi({
      description:
        'Counters by cause, url → cause → count: frames the writer could not store (queueDepth, queueMemory, limit, schemaConflict, storageError, …) and causes the application counted (writer.count); absent when none',
    }),
  })
  .openapi('Info');

export const SchemaListSchema = z
  .object({
    schemas: z.array(
      z.object({
        name: z.string(),
        encoding: z.string(),
        schemaType: z.number(),
        data: z.string().openapi({ description: 'base64' }),
      }),
    ),
  })
  .openapi('SchemaList');

export const MessageSchema = z
  .object({
    timestamp: z.number().openapi({ description: 'log time: µs since recording start' }),
    publishTime: z.number().optional().openapi({
      description:
        'publish (sample) time, µs since recording start (may be negative); every format of ours has one (= the log time unless the writer was given another); absent only where a foreign format has none',
    }),
    url: z.string(),
    action: z.string().openapi({ example: 'Pub' }),
    serType: z.string(),
    schemaType: z
      .number()
      .openapi({ description: 'SchemaType: 0 unknown, 1 raw, 2 zerocopy, 3 protobuf, 4 flatbuffers, 5 cdr' }),
    size: z.number(),
    data: z.unknown().openapi({
      description: 'base64 payload; with decode=true the decoded JSON value or text when `decoded` is not null',
    }),
    decoded: z
      .enum(['protobuf', 'json', 'cbor', 'ros1', 'cdr', 'ulog', 'flatbuffer', 'text'])
      .nullable()
      .optional()
      .openapi({ description: 'Only with decode=true' }),
    decodeError: z.string().optional(),
  })
  .openapi('Message');

export const MessagePageSchema = z
  .object({
    messages: z.array(MessageSchema),
    next: z.string().nullable().openapi({ description: 'Opaque cursor for the next page, null at the end' }),
  })
  .openapi('MessagePage');

const idParam = z
  .string()
  .min(1)
  .openapi({
    param: { name: 'id', in: 'path' },
    description: 'Bag id (URL-encoded, one segment)',
    example: 'runs%2Fdrive.vdb',
  });
export const IdParams = z.object({ id: idParam });
export const AttachmentParams = z.object({
  id: idParam,
  index: z
    .string()
    .regex(/^\d{1,9}$/)
    .openapi({
      param: { name: 'index', in: 'path' },
      description: "Position in the info's `attachments` (its `index`)",
      example: '0',
    }),
});

/** A `urls` query parameter: repeated, or comma-separated in one (the routes' `listParam` reads both). */
export const urlsParam = (purpose: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      param: { name: 'urls', in: 'query' },
      description: `${purpose}: repeat the parameter or separate with commas; default all`,
      type: 'string',
    });

/**
 * The exact url to keep, repeatable: taken as it is, neither split at commas nor trimmed, for urls `urls` cannot name
 * (`a,b`, ` padded `). Both may be given; a message of any url named either way is kept.
 */
export const urlParam = (purpose: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .optional()
    .openapi({
      param: { name: 'url', in: 'query' },
      description: `${purpose}, one exact url per parameter (repeat it; not split at commas, not trimmed)`,
      type: 'string',
    });

/** An optional query parameter holding a decimal number ≥ 0; `rule` is what its error says it must be. */
export const decimalParam = (name: string, description: string, rule: string) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, rule)
    .optional()
    .openapi({ param: { name, in: 'query' }, description });

/** A window bound in ms since recording start (`begin`, `end`). */
export const msParam = (name: string, description: string) => decimalParam(name, description, 'a number of ms ≥ 0');

export const MessagesQuery = z.object({
  urls: urlsParam('Urls to keep'),
  url: urlParam('Url to keep'),
  begin: msParam('begin', 'Window start, ms since recording start (inclusive)'),
  end: msParam('end', 'Window end, ms since recording start (inclusive); default the end'),
  timeBase: z
    .enum(['log', 'publish'])
    .optional()
    .openapi({
      param: { name: 'timeBase', in: 'query' },
      description:
        'What begin/end apply to: log (default) or publish times (format reference §1.3); messages keep the file (log) order',
    }),
  limit: z
    .string()
    .regex(/^-?\d+$/, 'an integer')
    .optional()
    .openapi({
      param: { name: 'limit', in: 'query' },
      description: 'Page size, clamped to [1, 10000]; default 1000 for json, unlimited for streams',
    }),
  cursor: z
    .string()
    .max(8192)
    .optional()
    .openapi({
      param: { name: 'cursor', in: 'query' },
      description: 'The `next` token of the previous page (it carries the query)',
    }),
  format: z
    .enum(['json', 'ndjson', 'binary'])
    .optional()
    .openapi({ param: { name: 'format', in: 'query' }, description: 'json (pages), ndjson or binary (streams)' }),
  decode: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .openapi({
      param: { name: 'decode', in: 'query' },
      description: 'Decode protobuf (embedded descriptors), JSON and text payloads',
    }),
  jsonNames: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .openapi({
      param: { name: 'jsonNames', in: 'query' },
      description:
        'With decode=true: name protobuf fields by their JSON name (json_name, else lowerCamelCase) instead of the .proto name',
    }),
});

export const TimingQuery = z.object({
  urls: urlsParam('Urls to analyse'),
  url: urlParam('Url to analyse'),
  factor: decimalParam(
    'factor',
    'A gap is an interval longer than factor × the url’s median interval (default 1.5)',
    'a positive number',
  ),
});

export const TimingSchema = z
  .object({
    factor: z.number(),
    urls: z.array(
      z.object({
        url: z.string(),
        action: z.string().nullable().openapi({
          description:
            'A stream is a url AND an action (C/Req, C/Resp, Pub…): an RPC url has one entry for its requests and one for its responses; null for a url asked for that has no messages',
        }),
        count: z.number(),
        rateHz: z.number(),
        intervalUs: z
          .object({ min: z.number(), p50: z.number(), p99: z.number(), max: z.number() })
          .nullable()
          .openapi({ description: 'Nearest-rank percentiles of the intervals (µs); null with fewer than two frames' }),
        gaps: z
          .array(z.object({ startUs: z.number(), lengthUs: z.number() }))
          .openapi({ description: 'Intervals longer than factor × the median period' }),
      }),
    ),
  })
  .openapi('Timing');

export const ReplayCommandDoc = z
  .object({
    op: z.enum(['play', 'pause', 'resume', 'step', 'seek', 'rate', 'stop']),
    rate: z
      .number()
      .optional()
      .openapi({ description: 'play/rate: speed multiplier, 0 = as fast as the client reads' }),
    begin: z.number().optional().openapi({ description: 'play: ms' }),
    end: z.number().optional().openapi({ description: 'play: ms, inclusive' }),
    urls: z.array(z.string()).optional(),
    times: z.number().optional().openapi({ description: 'play: passes, ≤ 0 loops forever' }),
    paused: z.boolean().optional().openapi({ description: 'play: start paused' }),
    timeBase: z.enum(['log', 'publish']).optional().openapi({
      description: 'play: pace by log (default) or publish times; begin/end, seek and status times are then that time',
    }),
    time: z.number().optional().openapi({ description: 'seek: ms' }),
    id: z
      .union([z.string().max(CONTROL_ID_MAX_LENGTH), z.number()])
      .optional()
      .openapi({
        description:
          'any command: a client-chosen id, echoed on the status event that answers the command (or on its error event)',
      }),
  })
  .openapi('ReplayCommand');

export const ReplayEventDoc = z
  .object({
    event: z.enum(['status', 'finished', 'error']),
    status: z.enum(['playing', 'paused', 'stopped']).optional(),
    time: z.number().optional().openapi({ description: 'ms of the last frame sent' }),
    rate: z.number().optional(),
    dropped: z.number().optional(),
    interrupted: z.boolean().optional(),
    code: z.string().optional(),
    message: z.string().optional(),
    id: z.union([z.string(), z.number()]).optional().openapi({
      description: 'status, error: the id of the command this event answers; absent on other events',
    }),
  })
  .openapi('ReplayEvent');
