import {
  type AttachmentMeta,
  formatVlinkDate,
  type Info,
  type InfoMetadata,
  localTimezoneMinutes,
  type SchemaType,
  type UrlMeta,
} from '@vlink/bag-core';
import type { TimeBase } from './time-base.js';

/** One url (topic) of a foreign file as its reader found it. */
export interface ForeignUrl {
  url: string;
  /** The type name (`sensor_msgs/Imu`, `apollo.canbus.Chassis`, a ULog format name). */
  ser: string;
  schemaType: SchemaType;
  /** The payload encoding, MCAP's well-known name where there is one. */
  encoding: string;
  count: number;
  /** Payload bytes, 0 where the format does not tell without reading every message. */
  size: number;
  /** The position of the url's own schema in the reader's schemas, where the format names one (UrlMeta.schemaIndex). */
  schemaIndex?: number;
}

export interface ForeignFacts {
  path: string;
  format: string;
  version: string;
  storageType: string;
  compressionType: string;
  processName?: string;
  /** A recording header the file carries (vlink-bag's `VLinkHeader` record in a plain `.mcap`). */
  tagName?: string;
  timezone?: number;
  base: TimeBase;
  /** Earliest and latest log time, ns since the epoch; undefined for a file without messages. */
  firstNs: bigint | undefined;
  lastNs: bigint | undefined;
  hasCompleted: boolean;
  fileSize: number;
  splitCount?: number;
  hasSchema: boolean;
  urls: ForeignUrl[];
  metadata: InfoMetadata[];
  attachments?: AttachmentMeta[];
}

/**
 * The `Info` of a foreign file. Fields VLink defines for its own formats get the nearest honest value: no tag
 * (`Empty`), the writer library (or `Unknown`) as the process, the local timezone of the start as VLink's reader
 * assumes for MCAP files without a `VLinkHeader`, loss unknown (−1) and no rate (0).
 */
export function foreignInfo(f: ForeignFacts): Info {
  const startMs = f.base.startMs;
  const ms = (ns: bigint | undefined) => (ns === undefined ? startMs : Number(ns / 1_000_000n));
  const urls: UrlMeta[] = f.urls.map((u, index) => ({
    index,
    url: u.url,
    type: 'Event',
    ser: u.ser,
    schemaType: u.schemaType,
    count: u.count,
    size: u.size,
    loss: -1,
    freq: 0,
    encoding: u.encoding,
    ...(u.schemaIndex === undefined ? {} : { schemaIndex: u.schemaIndex }),
  }));
  const info: Info = {
    path: f.path,
    format: f.format,
    version: f.version,
    storageType: f.storageType,
    messageCount: f.urls.reduce((sum, u) => sum + u.count, 0),
    totalDuration: Math.max(0, ms(f.lastNs) - startMs),
    blankDuration: Math.max(0, ms(f.firstNs) - startMs),
    timeAccuracy: 'MicroSecond',
    compressionType: f.compressionType,
    processName: f.processName || 'Unknown',
    dateTime: formatVlinkDate(startMs),
    tagName: f.tagName || 'Empty',
    hasCompleted: f.hasCompleted,
    timezone: f.timezone ?? localTimezoneMinutes(startMs),
    startTimestamp: startMs,
    splitCount: f.splitCount ?? 1,
    splitBySize: 0,
    splitByTime: 0,
    hasSchema: f.hasSchema,
    totalRawSize: f.urls.reduce((sum, u) => sum + u.size, 0),
    fileSize: f.fileSize,
    urls,
    metadata: f.metadata,
  };
  if (f.attachments) info.attachments = f.attachments;
  return info;
}

/** A deep enough copy of an Info for callers that may change theirs. */
export function copyInfo(info: Info): Info {
  const copy: Info = { ...info, urls: info.urls.map((u) => ({ ...u })) };
  if (info.metadata) copy.metadata = info.metadata.map((m) => ({ name: m.name, values: { ...m.values } }));
  if (info.attachments) copy.attachments = info.attachments.map((a) => ({ ...a }));
  return copy;
}

/** Stringified values for a metadata entry, dropping undefined ones. */
export function metadataEntry(
  name: string,
  values: Record<string, string | number | bigint | boolean | undefined>,
): InfoMetadata {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (v !== undefined) out[k] = String(v);
  return { name, values: out };
}
