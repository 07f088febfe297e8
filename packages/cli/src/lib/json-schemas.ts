/**
 * The JSON Schema (draft 2020-12) of every verb's `--json` output: one document on stdout, except `cat --json`,
 * which writes one frame object per line (the schema describes one line). The docs' CLI reference prints these, and
 * the tests validate every verb's output against them, so neither can drift.
 */
import { REPORT_JSON_SCHEMA, SUMMARY_JSON_SCHEMA } from '@vlink/bag';

type Schema = Record<string, unknown>;

const int = { type: 'integer', minimum: 0 } as const;
const num = { type: 'number' } as const;
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;

function object(properties: Record<string, unknown>, required: readonly string[] = Object.keys(properties)): Schema {
  return { type: 'object', properties, required: [...required], additionalProperties: false };
}

const urlTiming: Schema = {
  type: 'object',
  required: ['url', 'action', 'count', 'rateHz', 'gaps'],
  properties: {
    url: str,
    action: { type: ['string', 'null'], description: 'the stream is the url AND this action (C/Req, C/Resp, Pub…)' },
    count: int,
    rateHz: num,
    gaps: { type: 'array', items: { type: 'object', required: ['startUs', 'lengthUs'] } },
  },
};

// `info --json` is the sidecar summary document (core's BagSummary, format reference §13), plus `timing` with --gaps.
// Without its `$id`: this is a schema of its own (the summary plus `timing`), not the summary's.
const info: Schema = {
  ...Object.fromEntries(Object.entries(SUMMARY_JSON_SCHEMA).filter(([key]) => key !== '$id')),
  description:
    "the recording summary (core's BagSummary: Info plus streams, counters, errors), plus `timing` with --gaps",
  properties: {
    ...SUMMARY_JSON_SCHEMA.properties,
    timing: object({ factor: num, urls: { type: 'array', items: urlTiming } }),
  },
};

const frameLine: Schema = {
  type: 'object',
  description: 'one line per frame: the NDJSON frame shape (`cat`, `play --stdout`, `record --stdin`)',
  required: ['timestamp', 'url', 'action', 'serType', 'schemaType', 'size', 'data'],
  properties: {
    timestamp: num,
    publishTime: { type: 'number', description: 'publish (sample) time, µs since start; absent = the log time' },
    url: str,
    action: { enum: ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'] },
    serType: str,
    schemaType: { type: 'integer', minimum: 0, maximum: 5 },
    size: int,
    data: { type: 'string', contentEncoding: 'base64' },
    decoded: {},
    decodeError: { type: 'string', description: '--decode: why a payload that looked decodable was not' },
  },
  additionalProperties: false,
};

const copyResult = (inputs: Schema): Schema =>
  object({ ...inputs, output: str, frames: int, bytes: int, warnings: { type: 'array', items: str } });

const checkProblems: Schema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['file', 'message'],
    properties: { file: str, message: str, offset: int, row: int, url: str, timeUs: num },
    additionalProperties: false,
  },
};

const checkReport: Schema = object(
  {
    ok: bool,
    path: str,
    quick: bool,
    frames: int,
    problems: {
      ...checkProblems,
      description: 'where the bag is damaged; a bag that does not even open has one, the reason it does not (frames 0)',
    },
    moreProblems: int,
    notDecoded: {
      description: '--decode: urls whose payloads could not be decoded for want of a schema (not counted as problems)',
      type: 'array',
      items: object({ url: str, frames: int, reason: str }),
    },
  },
  ['ok', 'path', 'quick', 'frames', 'problems', 'moreProblems'],
);

const urlRepair: Schema = {
  type: 'object',
  required: ['url', 'recoveredFrames', 'recoveredBytes', 'lostFrames', 'lostBytes'],
  properties: { url: str, action: str, recoveredFrames: int, recoveredBytes: int, lostFrames: int, lostBytes: int },
  additionalProperties: false,
};

const repairReport: Schema = {
  oneOf: [
    {
      description: 'the bag passed check: nothing was rewritten',
      ...object({ path: str, ok: { const: true }, rewritten: { const: false } }),
    },
    {
      description: 'the repair failed (the bag could not be opened or salvaged): nothing was rewritten, exit 1',
      ...object({ path: str, ok: { const: false }, rewritten: { const: false }, problems: checkProblems }),
    },
    {
      description: "core's RepairReport",
      type: 'object',
      required: [
        'path',
        'output',
        'replaced',
        'readableFrames',
        'frames',
        'madeUpFrames',
        'bytes',
        'lostFrames',
        'lostBytes',
        'lostMetadata',
        'lossless',
        'urls',
        'problems',
      ],
      properties: {
        path: str,
        output: str,
        backup: str,
        replaced: bool,
        readableFrames: int,
        frames: int,
        madeUpFrames: int,
        bytes: int,
        lostFrames: int,
        lostBytes: int,
        lostMetadata: { type: 'array', items: str },
        lossless: bool,
        urls: { type: 'array', items: urlRepair },
        problems: { type: 'array', items: str },
        segments: { type: 'array' },
      },
    },
  ],
};

const dumpResult: Schema = {
  type: 'object',
  description: "core's DumpResult",
  required: ['file', 'reason', 'frames', 'bytes', 'urls', 'startTimestamp', 'durationUs', 'triggerUs', 'rotated'],
  properties: {
    file: str,
    reason: str,
    frames: int,
    bytes: int,
    urls: int,
    startTimestamp: num,
    durationUs: num,
    triggerUs: num,
    rotated: { type: 'array', items: str },
  },
};

const triggerEvent: Schema = {
  description: 'one line per event',
  oneOf: [
    object({ event: { const: 'listening' }, url: str }),
    object({ event: { const: 'ready' }, pid: int }),
    {
      ...dumpResult,
      required: ['event', 'via', ...(dumpResult['required'] as string[])],
      properties: {
        event: { const: 'dump' },
        via: { enum: ['key', 'SIGUSR1', 'stdin', 'http'] },
        ...(dumpResult['properties'] as object),
      },
    },
    object({ event: { const: 'error' }, via: str, message: str }),
  ],
};

const exportUrl = object({
  messages: int,
  payloadBytes: int,
  files: int,
  decodeFailures: int,
  textReplaced: int,
  droppedFields: int,
});
const exportBag = object({
  bagId: str,
  location: str,
  skipped: bool,
  replaced: {
    ...bool,
    description: 'an earlier export of another version of the bag (or under another bag_id) was deleted first',
  },
  messages: int,
  files: int,
  discardedFiles: int,
});
/** `export --json`: the report of `exportMessages` (@vlink/bag-lake). */
const exportReport = object({
  outDir: str,
  bags: int,
  skipped: { ...int, description: 'bags an earlier run had exported (left as they were)' },
  messages: int,
  bytes: { ...int, description: 'bytes of the Parquet files written' },
  payloadBytes: int,
  files: int,
  decodeFailures: { ...int, description: 'messages exported with data NULL because their payload did not decode' },
  textReplaced: {
    ...int,
    description:
      'messages whose decoded strings held lone UTF-16 surrogates, written to data with U+FFFD in their place',
  },
  droppedFields: {
    ...int,
    description: 'messages with a decoded field their url’s data STRUCT has no place for (the payload has it)',
  },
  staleLock: {
    description: 'the export whose lock was taken over because its process no longer ran; null when none',
    oneOf: [{ type: 'null' }, object({ pid: int, host: str, started: str })],
  },
  perUrl: { type: 'object', additionalProperties: exportUrl },
  perBag: { type: 'array', items: exportBag },
  seconds: num,
});

export const JSON_SCHEMAS: Readonly<Record<string, Schema>> = {
  info,
  report: REPORT_JSON_SCHEMA,
  cat: frameLine,
  export: exportReport,
  record: object({
    output: str,
    frames: int,
    bytes: int,
    dropped: int,
    droppedBy: { type: 'object', additionalProperties: int },
    oversize: int,
    skippedWhilePaused: int,
    reason: str,
  }),
  play: object({
    path: str,
    frames: int,
    bytes: int,
    interrupted: bool,
    warnings: { type: 'array', items: str },
  }),
  clone: copyResult({ source: str }),
  split: copyResult({ source: str }),
  merge: copyResult({ sources: { type: 'array', items: str, minItems: 2 } }),
  check: checkReport,
  reindex: object({ path: str, ok: { const: true } }),
  fix: repairReport,
  recover: repairReport,
  tag: object({ path: str, tag: str }),
  serve: object({ url: str, root: str }),
  trigger: triggerEvent,
  'trigger dump': dumpResult,
  query: object({
    columns: {
      type: 'array',
      description: 'names and DuckDB types, in order',
      items: object({ name: str, type: str }),
    },
    rows: {
      type: 'array',
      description: 'one array per row in column order (BIGINT a number when exact, TIMESTAMP ISO 8601 UTC with µs)',
      items: { type: 'array' },
    },
    truncated: bool,
  }),
  index: object({
    catalog: { type: 'string', description: 'the catalog folder (absolute): bags.parquet and urls.parquet' },
    added: int,
    updated: int,
    unchanged: int,
    removed: int,
    failed: {
      type: 'array',
      description: 'bags that could not be read: no row in the catalog, and the exit code is 1',
      items: object({ location: str, code: str, message: str }),
    },
    bags: int,
    urls: int,
  }),
  align: object({
    outputs: {
      type: 'array',
      description: 'one output file per bag, with its JSON description (`<output>.json`) beside it',
      items: object({ bag: str, output: str, description: str, rows: int, droppedRows: int }),
    },
  }),
};

/** Prints one `--json` document. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
