/**
 * `@vlink/bag-align`: offline alignment of a recording's urls onto one timeline (a url's messages or a fixed rate,
 * on log or publish times), decoded by `@vlink/bag-decode` into typed columns and written as Parquet, CSV or NDJSON
 * with a JSON description of the columns and the parameters. Streams: bounded memory whatever the bag's length.
 */
export { alignChunks, alignTable, openAlignment, checkFormat } from './align.js';
export type { AlignDescription, Alignment } from './align.js';
export { alignToFile, descriptionPath, formatOfPath } from './file-output.js';
export { ALIGN_FORMATS, MATCH_POLICIES, MISSING_POLICIES, resolveAlignOptions } from './options.js';
export type {
  AlignBase,
  AlignFormat,
  AlignOptions,
  MatchPolicy,
  MissingPolicy,
  ResolvedAlignOptions,
} from './options.js';
export type { AlignColumn, ColumnType } from './columns.js';
export type { UrlCounts } from './series.js';
export type { RowCounts } from './aligner.js';
export { PARQUET_DESCRIPTION_KEY } from './sinks/parquet-sink.js';
export { isoMicros } from './sinks/sink.js';
