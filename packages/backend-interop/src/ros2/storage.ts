import type { TimeBase } from '../common/time-base.js';

/** A topic (connection) of one storage file, keyed by the file's own id (sqlite topic id, MCAP channel id). */
export interface StorageTopic {
  key: number;
  name: string;
  type: string;
  /** Serialization format (`cdr`). */
  encoding: string;
  /** What the storage itself keeps of the topic (rosbag2 sqlite3 `topics` columns, mcap channel metadata), if any. */
  offeredQosProfiles?: string;
  typeDescriptionHash?: string;
}

/** One message as a storage hands it out; the object is reused by the next step. */
export interface StorageMessage {
  key: number;
  timestamp: number;
  /** The storage's own publish time (MCAP), µs since the start; undefined where the storage has none. */
  publishTime: number | undefined;
  sequence: number | undefined;
  data: Uint8Array;
}

export interface MessageWindow {
  keys: number[] | undefined;
  beginUs: number | undefined;
  endUs: number | undefined;
}

/** One storage file of a rosbag2 bag (sqlite3 `.db3` or `.mcap`). */
export interface Ros2Storage {
  readonly file: string;
  readonly identifier: 'sqlite3' | 'mcap';
  readonly topics: StorageTopic[];
  /** Message definitions by type: encoding (`ros2msg`, `ros2idl`) and text. */
  readonly definitions: Map<string, { encoding: string; text: string }>;
  readonly counts: Map<number, number>;
  readonly firstNs: bigint | undefined;
  readonly lastNs: bigint | undefined;
  readonly fileSize: number;
  /** Whether the file was complete: nothing read around, and finished (an MCAP storage without its footer is not). */
  readonly complete: boolean;
  /** What the storage read around (an MCAP storage's recovery scan), in words; empty when it read as written. */
  readonly problems: readonly string[];
  /** Why a storage with no problems is still not complete (an MCAP storage its writer did not finish); else undefined. */
  readonly unfinished?: string | undefined;
  /** The copy of metadata.yaml rosbag2 (Iron on) writes into the storage file, as YAML text; undefined if none. */
  readonly embeddedMetadata: string | undefined;
  /** The ROS distro the storage says it was recorded on (rosbag2's sqlite3 `schema` table, Humble on); else undefined. */
  readonly rosDistro: string | undefined;
  messages(window: MessageWindow, base: TimeBase): IterableIterator<StorageMessage>;
  close(): void;
}
