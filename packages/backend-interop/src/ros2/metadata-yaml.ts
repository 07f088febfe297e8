import { parse } from 'yaml';
import { corrupt } from '../common/errors.js';

/** A topic as `metadata.yaml` lists it. */
export interface Ros2TopicMetadata {
  name: string;
  type: string;
  serializationFormat: string;
  /** QoS profiles as written: a YAML string (before version 9) or a list, kept as JSON text. */
  qos: string;
  typeDescriptionHash: string;
  messageCount: number;
}

/** What a rosbag2 `metadata.yaml` (`rosbag2_bagfile_information`, versions 1–9) says about the bag. */
export interface Ros2Metadata {
  version: number;
  storageIdentifier: string;
  relativeFilePaths: string[];
  /** ns since the epoch as the file wrote it (a YAML integer, read exactly). */
  startingTimeNs: bigint | undefined;
  durationNs: bigint | undefined;
  messageCount: number;
  compressionFormat: string;
  compressionMode: string;
  rosDistro: string;
  customData: Record<string, string>;
  topics: Ros2TopicMetadata[];
}

/** Parses `metadata.yaml`; integers are read as bigint so nanosecond times stay exact. */
export function parseMetadataYaml(text: string, file: string): Ros2Metadata {
  const info = record(record(yamlDocument(text, file, 'metadata.yaml'))['rosbag2_bagfile_information']);
  if (Object.keys(info).length === 0) throw corrupt('metadata.yaml has no rosbag2_bagfile_information', file);
  return metadataOf(info);
}

/**
 * Parses the copy of the bag's metadata rosbag2 (Iron on) keeps inside each storage file: the last row of a sqlite3
 * storage's `metadata` table, an mcap storage's `rosbag2` metadata record (`serialized_metadata`). It is the same
 * YAML as `metadata.yaml` without the `rosbag2_bagfile_information` key around it.
 */
export function parseStorageMetadata(text: string, file: string): Ros2Metadata {
  const info = record(yamlDocument(text, file, 'the metadata stored in the storage file'));
  if (info['storage_identifier'] === undefined)
    throw corrupt('the metadata stored in the storage file is no rosbag2 metadata', file);
  return metadataOf(info);
}

function yamlDocument(text: string, file: string, what: string): unknown {
  try {
    // logLevel 'error': a damaged file's warnings (an unknown tag, …) would go to process.emitWarning, i.e. the
    // stderr of a CLI or server that never asked for them; what cannot be read is an error here anyway.
    return parse(text, { intAsBigInt: true, logLevel: 'error' });
  } catch (error) {
    throw corrupt(`${what} is not YAML (${(error as Error).message})`, file, undefined, error);
  }
}

function metadataOf(info: Record<string, unknown>): Ros2Metadata {
  const topics = list(info['topics_with_message_count']).map((entry) => {
    const e = record(entry);
    // `topic_and_type`: what the first rosbag2 releases (2018, version 1 and before) called it.
    const t = record(e['topic_metadata'] ?? e['topic_and_type']);
    const qos = t['offered_qos_profiles'];
    return {
      name: str(t['name']),
      type: str(t['type']),
      serializationFormat: str(t['serialization_format']) || 'cdr',
      qos:
        typeof qos === 'string' ? qos : JSON.stringify(qos ?? [], (_k, v) => (typeof v === 'bigint' ? Number(v) : v)),
      typeDescriptionHash: str(t['type_description_hash']),
      messageCount: num(e['message_count']),
    };
  });
  const customData: Record<string, string> = {};
  for (const [k, v] of Object.entries(record(info['custom_data']))) customData[k] = String(v);
  return {
    version: num(info['version']),
    storageIdentifier: str(info['storage_identifier']),
    relativeFilePaths: list(info['relative_file_paths']).map(str),
    startingTimeNs: big(record(info['starting_time'])['nanoseconds_since_epoch']),
    durationNs: big(record(info['duration'])['nanoseconds']),
    messageCount: num(info['message_count']),
    compressionFormat: str(info['compression_format']),
    compressionMode: str(info['compression_mode']),
    rosDistro: str(info['ros_distro']),
    customData,
    topics,
  };
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function str(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}
function num(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : 0;
}
function big(value: unknown): bigint | undefined {
  return typeof value === 'bigint' ? value : typeof value === 'number' ? BigInt(Math.trunc(value)) : undefined;
}
