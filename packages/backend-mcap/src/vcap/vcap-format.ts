import { CompressType, SchemaType, type ResolvedWriterConfig } from '@vlink/bag-core';

/** Header `profile` of VLink files; VLink's reader refuses any other. */
export const VLINK_PROFILE = 'vlink';

/**
 * Header `library`. VLink leaves mcap's default (`libmcap 2.1.3`); we write our own name instead: readers (VLink's
 * included) ignore the field, and naming the real writer keeps bug reports pointed at the right project.
 */
export const VCAP_LIBRARY = 'vlink-bag 0.1.0';

/** VLink's rule: chunks are zstd-compressed when chunking is on (`cacheSize > 0`) and `compress` is Auto or Zstd. */
export function writesZstdChunks(config: Pick<ResolvedWriterConfig, 'cacheSize' | 'compress'>): boolean {
  return config.cacheSize > 0 && (config.compress === CompressType.Auto || config.compress === CompressType.Zstd);
}

export const HEADER_METADATA = 'VLinkHeader';
/** Keys every VLinkHeader has and no other record we write: the header still, when its name is damaged. */
const HEADER_KEYS = ['version', 'compress', 'start_timestamp'];

/**
 * Whether a metadata record is a `.vcap`'s VLinkHeader: by its name, or, where that name is damaged, by the keys only
 * the header has (found by fuzzing: one garbled byte of the name lost the recording's start time, and every frame's
 * time moved to the first message's). Readers take the first such record; the writer writes it first.
 */
export function isHeaderMetadata(name: string, metadata: ReadonlyMap<string, string>): boolean {
  return name === HEADER_METADATA || HEADER_KEYS.every((key) => metadata.has(key));
}
export const CHANNEL_METADATA_PREFIX = 'VLinkChannel_';
/** vlink-bag (format reference §5.5): frames that never reached the file, per url (JSON cause → count). */
export const COUNTERS_METADATA = 'VLinkBagCounters';
/** Separator of the (url, action) channel key (VLink's `url + 0x1F + action`). */
export const KEY_SEPARATOR = '\x1f';

/** C `%f` / `double_to_string(x, 6)`: six decimals. */
export function fixed6(value: number): string {
  return Number.isFinite(value) ? value.toFixed(6) : '0.000000';
}

/**
 * Families that get MCAP Schema records whatever the schema's encoding: VLink's protobuf and flatbuffers, plus CDR
 * (its `ros2msg`/`ros2idl`/`omgidl` text is what Foxglove and ROS tools decode CDR with). Schemas of other families
 * are embedded when their encoding is a decodable well-known one (`ros1msg`, `jsonschema`).
 */
export function embedsSchema(type: SchemaType): boolean {
  return type === SchemaType.Protobuf || type === SchemaType.Flatbuffers || type === SchemaType.Cdr;
}

/** Hz over `count` messages between the first and last Pub/Sub/Set/Get timestamp (µs); 0 when the span is ≤ 0. */
export function frequency(count: number, firstUs: number, lastUs: number): number {
  const span = lastUs - firstUs;
  return span > 0 ? count / (span / 1e6) : 0;
}
