import type { ActionText, UrlKind } from './action-type.js';
import type { SchemaType } from './schema-type.js';

/** Per-url (per url + action for MCAP) metadata of a bag (VLink `UrlMeta`, format reference §2.4 and §2.10). */
export interface UrlMeta {
  /** Recording-global index (`VLinkUrls.id`, MCAP channel id − 1). */
  index: number;
  url: string;
  type: UrlKind;
  /** Present for formats that key channels by url + action (`.vcap`, `.vcapx`). */
  action?: ActionText;
  ser: string;
  schemaType: SchemaType;
  count: number;
  /** Uncompressed payload bytes. */
  size: number;
  /** Loss ratio in [0, 1], or −1 for unknown. */
  loss: number;
  /** Average rate in Hz over Pub/Sub/Set/Get messages. */
  freq: number;
  /**
   * Foreign formats: the payload encoding under MCAP's well-known name (`ros1`, `cdr`, `protobuf`, `json`, …, or
   * the format's own, e.g. `ulog`). The family in `schemaType` is coarser (ROS 1 and ULog have none of their own).
   */
  encoding?: string;
  /**
   * Foreign formats whose channels name their own schema record (MCAP, ROS 1 connections): the position in
   * `BagReader.getSchemas()` of the schema this url's messages use. Two schemas may share a type name (two versions
   * of a message recorded together); the name alone would pick the wrong one for one of them.
   */
  schemaIndex?: number;
}

/** One key/value record of a foreign file (an MCAP metadata record, rosbag2's `custom_data`, ULog info, …). */
export interface InfoMetadata {
  name: string;
  values: Record<string, string>;
}

/** An attachment of a foreign file (MCAP); `BagReader.getAttachment(index)` reads its bytes. */
export interface AttachmentMeta {
  /** Position in `Info.attachments`, the argument of `getAttachment`. */
  index: number;
  name: string;
  mediaType: string;
  /** ns since the Unix epoch as a decimal string (exact: too large for a number). */
  logTime: string;
  /** ns since the Unix epoch as a decimal string; `"0"` when unknown. */
  createTime: string;
  /** Bytes. */
  size: number;
}

/** What a reader knows about a bag (VLink `Info`, format reference §2.10; camelCase). Durations are ms, sizes bytes. */
export interface Info {
  path: string;
  /** `vdb`, `vdbx`, `vcap` or `vcapx`; for foreign formats `mcap`, `bag`, `rosbag2`, `record` or `ulog`. */
  format: string;
  version: string;
  /** `SQLite3` or `vcap` as VLink reports it. */
  storageType: string;
  messageCount: number;
  /** ms from recording start to the last message. */
  totalDuration: number;
  /** ms from recording start to the first message. */
  blankDuration: number;
  timeAccuracy: string;
  compressionType: string;
  processName: string;
  dateTime: string;
  tagName: string;
  hasCompleted: boolean;
  /** Minutes east of UTC. */
  timezone: number;
  /** Recording start, ms since the Unix epoch. */
  startTimestamp: number;
  splitCount: number;
  splitBySize: number;
  splitByTime: number;
  hasSchema: boolean;
  /** Sum of the urls' uncompressed sizes. */
  totalRawSize: number;
  /** Bytes on disk (all segments for split recordings). */
  fileSize: number;
  urls: UrlMeta[];
  /**
   * Foreign formats: the file's own key/value records, in file order, after the reader's description of the file's
   * header under a `<format>.` name (e.g. `mcap.header`, `rosbag2.metadata`, `ulog.parameters`). See the format guide
   * for what each reader lists. A `.vcap` or `.vdb` read with `tryToFix` lists here only what it read around (`vcap.problems`,
   * `vdb.problems`; see `infoProblems`).
   */
  metadata?: InfoMetadata[];
  /** Foreign formats only: the file's attachments (MCAP). */
  attachments?: AttachmentMeta[];
  /**
   * Frames that did not reach the file, per url and cause (`url → cause → count`), as the writer stored them at close
   * (beyond VLink; absent when the file holds none: nothing was dropped, or it was written without this record).
   */
  counters?: Record<string, Record<string, number>>;
}
