import type { ActionType, Frame, SchemaType, UrlKind } from '@vlink/bag-core';

// What a `.vcap` file writer keeps per (url, action) channel while it writes (`VcapFileWriter`), and what it reports.

/** What a file knows about one (url, action) channel; `.vcapx` aggregates these into its manifest. */
export interface VcapChannelSummary {
  channelId: number;
  globalIndex: number;
  url: string;
  action: ActionType;
  type: UrlKind;
  ser: string;
  schemaType: SchemaType;
  count: number;
  /** Payload bytes. */
  size: number;
  /** First and last Pub/Sub/Set/Get timestamp in µs, −1 when none. */
  firstUs: number;
  lastUs: number;
  loss: number;
  freq: number;
}

export class ChannelState {
  count = 0;
  size = 0;
  firstUs = -1;
  lastUs = -1;
  /** The (ser, family) pair of the last accepted frame: frames repeating it skip all checks. */
  lastSer: string;
  lastType: SchemaType;
  constructor(
    readonly id: number,
    readonly globalIndex: number,
    readonly url: string,
    readonly action: ActionType,
    readonly kind: UrlKind,
    readonly timed: boolean,
    public ser: string,
    public family: SchemaType,
    frame: Frame,
  ) {
    this.lastSer = frame.serType;
    this.lastType = frame.schemaType;
  }
}

/** A url's channels, by action. */
export class UrlChannels {
  constructor(
    readonly url: string,
    readonly byAction: Array<ChannelState | undefined> = [],
  ) {}
}
