/**
 * The lake's on-disk layout: the one contract between the catalog writer (`vlink-bag index`), the message export
 * (`vlink-bag export --format parquet`) and the query engine (`vlink-bag query`), and what Spark, DuckDB, pandas and
 * polars users read. Every column name and type below is written exactly so; a change here is a format change.
 *
 * A catalog is a folder:
 *   <catalog>/bags.parquet   one row per bag        (BAG_COLUMNS)
 *   <catalog>/urls.parquet   one row per bag × url  (URL_COLUMNS)
 * An export is a folder of hive-partitioned Parquet files, one row per message (MESSAGE_COLUMNS):
 *   <export>/messages/url=<url; ASCII specials percent-encoded>/date=<YYYY-MM-DD of log_time, UTC>/part-<bag hash>-<n>.parquet
 * (a `url=…` name over 255 bytes is cut to fit and ends in `~<16 hex digits of the url's SHA-256>`; the rows' `url`
 * column holds the whole url).
 * Times are TIMESTAMP holding UTC microseconds (Parquet TIMESTAMP(MICROS) as DuckDB writes it, isAdjustedToUTC
 * false: TIMESTAMPTZ would read back as TIMESTAMP WITH TIME ZONE and Spark as a session-zone instant), so DuckDB,
 * pyarrow and pandas read them as naive UTC times and Spark (3.4+) as TIMESTAMP_NTZ; durations and gaps are BIGINT
 * microseconds, named `_us`.
 */

/** A column of the lake: its name, its DuckDB / Parquet logical type, and what it holds. */
export interface LakeColumn {
  readonly name: string;
  readonly type: 'VARCHAR' | 'BIGINT' | 'INTEGER' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP' | 'BLOB';
  readonly nullable: boolean;
  readonly description: string;
}

export const CATALOG_BAGS_FILE = 'bags.parquet';
export const CATALOG_URLS_FILE = 'urls.parquet';
export const EXPORT_MESSAGES_DIR = 'messages';

export const BAG_COLUMNS: readonly LakeColumn[] = [
  {
    name: 'bag_id',
    type: 'VARCHAR',
    nullable: false,
    description: 'path of the bag relative to the indexed root, `/`-separated (the id `vlink-bag serve` gives it)',
  },
  {
    name: 'location',
    type: 'VARCHAR',
    nullable: false,
    description: 'absolute path or s3://bucket/key the bag was read from',
  },
  {
    name: 'format',
    type: 'VARCHAR',
    nullable: false,
    description: 'vdb | vdbx | vcap | vcapx | mcap | bag | db3 | record | ulg …',
  },
  {
    name: 'size_bytes',
    type: 'BIGINT',
    nullable: false,
    description: 'bytes of the file (of all segments for vdbx/vcapx)',
  },
  {
    name: 'modified',
    type: 'TIMESTAMP',
    nullable: true,
    description: 'mtime (local) or Last-Modified (S3): with size and etag, what incremental indexing compares',
  },
  { name: 'etag', type: 'VARCHAR', nullable: true, description: 'S3 ETag; null for local files' },
  {
    name: 'start_time',
    type: 'TIMESTAMP',
    nullable: true,
    description: 'first message (log time); null for an empty bag',
  },
  { name: 'end_time', type: 'TIMESTAMP', nullable: true, description: 'last message (log time)' },
  { name: 'duration_us', type: 'BIGINT', nullable: false, description: 'end − start in µs, 0 for an empty bag' },
  {
    name: 'message_count',
    type: 'BIGINT',
    nullable: false,
    description: 'messages of every url, as `info --json` counts them',
  },
  { name: 'url_count', type: 'INTEGER', nullable: false, description: 'urls in the bag' },
  {
    name: 'dropped',
    type: 'BIGINT',
    nullable: false,
    description: 'frames the recorder reported dropped (0 when the format does not say)',
  },
  {
    name: 'header_json',
    type: 'VARCHAR',
    nullable: true,
    description: 'the recording header of `info --json`, as JSON text',
  },
  {
    name: 'tags_json',
    type: 'VARCHAR',
    nullable: true,
    description: 'the tags of `info --json` (object), as JSON text',
  },
  { name: 'indexed_at', type: 'TIMESTAMP', nullable: false, description: 'when this row was written' },
];

export const URL_COLUMNS: readonly LakeColumn[] = [
  { name: 'bag_id', type: 'VARCHAR', nullable: false, description: 'see BAG_COLUMNS' },
  { name: 'url', type: 'VARCHAR', nullable: false, description: 'the url (topic / channel)' },
  { name: 'type', type: 'VARCHAR', nullable: true, description: 'message type name' },
  { name: 'ser', type: 'VARCHAR', nullable: true, description: 'serialization (protobuf, json, cdr, ros1, raw, …)' },
  { name: 'action', type: 'VARCHAR', nullable: true, description: 'pub | sub | req | res … as `info --json` gives it' },
  { name: 'message_count', type: 'BIGINT', nullable: false, description: 'messages of this url' },
  {
    name: 'bytes',
    type: 'BIGINT',
    nullable: false,
    description: "payload bytes of this url: the sum of its messages' payload sizes, as read when indexing",
  },
  { name: 'start_time', type: 'TIMESTAMP', nullable: true, description: 'first message of this url (log time)' },
  { name: 'end_time', type: 'TIMESTAMP', nullable: true, description: 'last message of this url (log time)' },
  {
    name: 'rate_hz',
    type: 'DOUBLE',
    nullable: true,
    description: '(count − 1) / (end − start) in Hz; null below two messages',
  },
  { name: 'dropped', type: 'BIGINT', nullable: false, description: 'frames of this url the recorder reported dropped' },
  {
    name: 'max_gap_us',
    type: 'BIGINT',
    nullable: true,
    description: 'largest log-time gap between consecutive messages, µs',
  },
  {
    name: 'gap_count',
    type: 'BIGINT',
    nullable: false,
    description: 'gaps longer than GAP_FACTOR × the median period',
  },
];

/** A gap is a pause longer than this many median periods of its url (the catalog's `gap_count`). */
export const GAP_FACTOR = 3;

export const MESSAGE_COLUMNS: readonly LakeColumn[] = [
  { name: 'bag_id', type: 'VARCHAR', nullable: false, description: 'see BAG_COLUMNS' },
  {
    name: 'url',
    type: 'VARCHAR',
    nullable: false,
    description: 'hive partition key (also in the path, percent-encoded)',
  },
  { name: 'date', type: 'VARCHAR', nullable: false, description: 'hive partition key: YYYY-MM-DD of log_time, UTC' },
  { name: 'action', type: 'VARCHAR', nullable: true, description: 'as `cat --json` gives it' },
  { name: 'ser', type: 'VARCHAR', nullable: true, description: 'serialization of the url' },
  { name: 'seq', type: 'BIGINT', nullable: false, description: 'index of the message in its bag, in replay order' },
  { name: 'log_time', type: 'TIMESTAMP', nullable: false, description: 'log time' },
  { name: 'publish_time', type: 'TIMESTAMP', nullable: true, description: 'publish time where the format has one' },
  { name: 'size', type: 'INTEGER', nullable: false, description: 'payload bytes' },
  { name: 'payload', type: 'BLOB', nullable: false, description: 'the payload as recorded' },
  // plus `data`: a STRUCT of the decoded fields (protobuf, JSON, CDR, ROS 1 …) where the url carries a schema; its
  // shape differs per url, so readers use union_by_name across urls.
];
