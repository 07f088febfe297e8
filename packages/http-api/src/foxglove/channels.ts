import type { Channel } from '@foxglove/ws-protocol';
import { foxgloveChannels } from '@vlink/bag-decode';
import type { Info, SchemaData } from '@vlink/bag';

/**
 * What a Foxglove server offers for one bag: its `serverInfo` (capability `time`; metadata naming the bag, its format
 * and `startTimestamp` in ms, which `vlink-bag record --from` reads to keep the bag's timeline) and its channels, and
 * how a frame maps onto them. Both the server's socket and `vlink-bag play --serve` build it here, so they advertise
 * the same thing for the same bag.
 */
export interface FoxgloveOffer {
  readonly serverName: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** `@vlink/bag-decode`'s mapping, numbered from 1 in `Info.urls` order (a url selection keeps the numbers). */
  readonly channels: readonly Channel[];
  channelOf(url: string): Channel | undefined;
  hasChannel(id: number): boolean;
  /** A frame time (ms from the recording start) as the protocol's absolute ns: recording start + frame time. */
  timeNs(timestamp: number): bigint;
}

export interface FoxgloveOfferOptions {
  serverName: string;
  /** How the bag is named in the metadata: the server's bag id, play's path. */
  bag: string;
  info: Info;
  schemas: readonly SchemaData[];
  /** Only these urls (play's url selection); default every url. */
  keep?: ReadonlySet<string>;
}

export function foxgloveOffer(options: FoxgloveOfferOptions): FoxgloveOffer {
  const { info, keep } = options;
  const channels = foxgloveChannels(info.urls, options.schemas)
    .map((channel, i): Channel => ({ id: i + 1, ...channel }))
    .filter((channel) => !keep || keep.has(channel.topic));
  const byUrl = new Map(channels.map((channel) => [channel.topic, channel]));
  const ids = new Set(channels.map((channel) => channel.id));
  const startNs = BigInt(Math.round(info.startTimestamp)) * 1_000_000n;
  return {
    serverName: options.serverName,
    metadata: { bag: options.bag, format: info.format, startTimestamp: String(info.startTimestamp) },
    channels,
    channelOf: (url) => byUrl.get(url),
    hasChannel: (id) => ids.has(id),
    timeNs: (timestamp) => startNs + BigInt(Math.round(timestamp)) * 1000n,
  };
}
