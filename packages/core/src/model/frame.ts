import { ActionType } from './action-type.js';
import { SchemaType } from './schema-type.js';

/**
 * The unit recorded and replayed (VLink `Frame`, format reference §1.1).
 *
 * `timestamp` is microseconds since recording start (not wall clock); on the writer side a negative value asks the
 * writer to assign its own clock. A frame's `data` returned by a reader is a view that is valid until the next read:
 * copy it (`data.slice()`) to keep it.
 */
export interface Frame {
  timestamp: number;
  url: string;
  data: Uint8Array;
  serType: string;
  schemaType: SchemaType;
  actionType: ActionType;
  /**
   * The publish (sample) time: when the data was produced or sampled at its source, while `timestamp` is the log
   * time, when the recorder received it (format reference §1.3). µs since recording start (same base and flooring as
   * `timestamp`; may be negative: a sample taken before the recording started). Optional on the writer side: absent
   * (or not a finite number) means "the same as the log time". Every writer stores it (`.vcap` and plain `.mcap` as
   * MCAP `publish_time`, `.vdb` in the `VLinkBagPublishTimes` side table) and every reader of our formats sets it, equal
   * to `timestamp` where none was given. Foreign readers: MCAP's `publish_time`; for ROS 1 bags and ROS 2 sqlite3
   * bags, which have none, the `std_msgs/Header` stamp of message types that start with one.
   */
  publishTime?: number;
  /** Set by readers of foreign formats with a per-message sequence number (MCAP's `sequence`, ROS 1 `Header.seq`). */
  sequence?: number;
}

/** Builds a frame with VLink's defaults (auto timestamp, Pub, unknown family). */
export function createFrame(init: Partial<Frame> & Pick<Frame, 'url' | 'data'>): Frame {
  const frame: Frame = {
    timestamp: init.timestamp ?? -1,
    url: init.url,
    data: init.data,
    serType: init.serType ?? '',
    schemaType: init.schemaType ?? SchemaType.Unknown,
    actionType: init.actionType ?? ActionType.Publish,
  };
  // The optional times are part of `Frame` too: a caller who gives them means them (absent keys stay absent, so a
  // frame without a publish time still reads back with publish = log time).
  if (init.publishTime !== undefined) frame.publishTime = init.publishTime;
  if (init.sequence !== undefined) frame.sequence = init.sequence;
  return frame;
}

/** A schema to embed in a bag (e.g. a protobuf FileDescriptorSet or a flatbuffers bfbs). */
export interface SchemaData {
  /** Fully qualified message or table name; equals the frame's `serType` (or one half of an RPC `Req|Resp`). */
  name: string;
  /** Encoding as supplied (e.g. `protobuf`, `flatbuffers`); if empty, the family's label is used. */
  encoding: string;
  schemaType: SchemaType;
  data: Uint8Array;
}
