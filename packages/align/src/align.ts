import type { BagReader, TimeBase } from '@vlink/bag-core';
import { Aligner, columnsOf } from './aligner.js';
import type { AlignColumn } from './columns.js';
import {
  type AlignBase,
  type AlignFormat,
  type AlignOptions,
  ALIGN_FORMATS,
  type MatchPolicy,
  type MissingPolicy,
  resolveAlignOptions,
} from './options.js';
import { planAlignment } from './setup.js';
import type { UrlCounts } from './series.js';
import { parquetSink } from './sinks/parquet-sink.js';
import { isoMicros, type RowSink, type SinkContext } from './sinks/sink.js';
import { csvSink, ndjsonSink } from './sinks/text-sinks.js';
import { BagError } from '@vlink/bag-core';
import { concatBytes } from '@vlink/bag-core/internal';

/** What an alignment wrote: the JSON description beside every output file (README "Description"). */
export interface AlignDescription {
  /** Version of this document's layout. */
  alignVersion: 1;
  bag: string;
  format: AlignFormat | 'rows';
  /** The recording start (ISO 8601 UTC): a time column holds this plus the µs on the time base. */
  recordingStart: string;
  parameters: {
    base: AlignBase;
    timeBase: TimeBase;
    match: Record<string, MatchPolicy>;
    /** µs; null: no limit. */
    toleranceUs: number | null;
    missing: MissingPolicy;
    startUs?: number;
    endUs?: number;
    reorderWindowUs?: number;
  };
  columns: AlignColumn[];
  rows: number;
  droppedRows: number;
  framesRead: number;
  urls: Record<string, UrlCounts>;
}

/** An alignment in progress: its columns are known before the first row. */
export interface Alignment {
  columns: AlignColumn[];
  /** The rows in batches; times are µs on the time base (not epoch). Read once. */
  rows(): AsyncGenerator<unknown[][], void, undefined>;
  /** The description; complete once `rows()` is exhausted. */
  description(): AlignDescription;
}

/**
 * Plans an alignment of `reader`'s urls (checks the options and the urls, takes each url's columns from its first
 * message) and returns it ready to read. Errors are BagErrors: INVALID_ARGUMENT for options, NOT_FOUND for a url not
 * in the bag, NOT_SUPPORTED for a url whose payloads do not decode.
 */
export async function openAlignment(
  reader: BagReader,
  options: AlignOptions,
  format: AlignFormat | 'rows' = 'rows',
): Promise<Alignment> {
  const resolved = resolveAlignOptions(options);
  const plan = await planAlignment(reader, resolved);
  const aligner = new Aligner(plan, resolved);
  const columns = columnsOf(plan);
  const parameters: AlignDescription['parameters'] = {
    base: resolved.base,
    timeBase: resolved.timeBase,
    match: Object.fromEntries(plan.aligned.map(({ url, policy }) => [url, policy])),
    toleranceUs: Number.isFinite(resolved.toleranceUs) ? resolved.toleranceUs : null,
    missing: resolved.missing,
    ...(resolved.startUs === undefined ? {} : { startUs: resolved.startUs }),
    ...(resolved.endUs === undefined ? {} : { endUs: resolved.endUs }),
    ...(resolved.timeBase === 'publish' ? { reorderWindowUs: resolved.reorderWindowUs } : {}),
  };
  return {
    columns,
    rows: () => aligner.rows(reader),
    description: () => ({
      alignVersion: 1,
      bag: options.bagName ?? reader.path,
      format,
      recordingStart: isoMicros(plan.info.startTimestamp * 1000),
      parameters,
      columns,
      ...aligner.counts,
      urls: Object.fromEntries(aligner.perUrl),
    }),
  };
}

/** Every row in memory, with the description: for small bags and tests (`alignChunks` streams). */
export async function alignTable(
  reader: BagReader,
  options: AlignOptions,
): Promise<{ columns: AlignColumn[]; rows: unknown[][]; description: AlignDescription }> {
  const alignment = await openAlignment(reader, options);
  const rows: unknown[][] = [];
  for await (const batch of alignment.rows()) rows.push(...batch);
  return { columns: alignment.columns, rows, description: alignment.description() };
}

export function checkFormat(format: unknown): AlignFormat {
  if (typeof format === 'string' && (ALIGN_FORMATS as readonly string[]).includes(format)) {
    return format as AlignFormat;
  }
  throw new BagError(
    'INVALID_ARGUMENT',
    `format must be one of ${ALIGN_FORMATS.join(', ')}; got ${JSON.stringify(format)}`,
  );
}

function sinkFor(format: AlignFormat, context: SinkContext): RowSink {
  if (format === 'parquet') return parquetSink(context);
  return format === 'csv' ? csvSink(context) : ndjsonSink(context);
}

/**
 * The output file's bytes as they are made, for any writer (a file, an HTTP response): memory holds one batch of
 * rows and, for Parquet, one row group. Returns the description once the last bytes are out.
 */
export async function* alignChunks(
  reader: BagReader,
  options: AlignOptions,
  format: AlignFormat,
): AsyncGenerator<Uint8Array, AlignDescription, undefined> {
  const alignment = await openAlignment(reader, options, checkFormat(format));
  const sink = sinkFor(format, {
    columns: alignment.columns,
    epochOffsetUs: reader.getInfo().startTimestamp * 1000,
    rowGroupSize: resolveAlignOptions(options).rowGroupSize,
  });
  // Rows become ready a few at a time: small pieces are gathered into chunks of about CHUNK_BYTES, so a file gets
  // one write (and an HTTP response one chunk) per chunk, not one per row.
  const pending: Uint8Array[] = [];
  let size = 0;
  const take = (): Uint8Array => {
    const out = concatBytes(pending, size);
    pending.length = 0;
    size = 0;
    return out;
  };
  for await (const batch of alignment.rows()) {
    for (const piece of sink.push(batch)) {
      pending.push(piece);
      size += piece.length;
    }
    if (size >= CHUNK_BYTES) yield take();
  }
  const description = alignment.description();
  for (const piece of sink.finish(description)) {
    pending.push(piece);
    size += piece.length;
  }
  if (size > 0) yield take();
  return description;
}

const CHUNK_BYTES = 256 * 1024;
