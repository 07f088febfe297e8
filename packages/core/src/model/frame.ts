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
   * Set by readers of foreign formats that record a second time per message: µs since recording start (same base
   * and flooring as `timestamp`; may be negative). MCAP's `publish_time`; for ROS 1 bags and ROS 2 sqlite3 bags,
   * which have none, the `std_msgs/Header` stamp of message types that start with one. The plain `.mcap` writer stores
   * it (as `publish_time`); the other writers ignore it.
   */
  publishTime?: number;
  /** Set by readers of foreign formats with a per-message sequence number (MCAP's `sequence`, ROS 1 `Header.seq`). */
  sequence?: number;
}

/** Builds a frame with VLink's defaults (auto timestamp, Pub, unknown family). */
export function createFrame(init: Partial<Frame> & Pick<Frame, 'url' | 'data'>): Frame {
  return {
    timestamp: init.timestamp ?? -1,
    url: init.url,
    data: init.data,
    serType: init.serType ?? '',
    schemaType: init.schemaType ?? SchemaType.Unknown,
    actionType: init.actionType ?? ActionType.Publish,
  };
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
