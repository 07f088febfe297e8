import {
  type ActionType,
  actionText,
  BagError,
  FORMAT_VERSION,
  formatVlinkDate,
  localTimezoneMinutes,
  parseAction,
  parseSchemaType,
  parseVlinkDate,
  resolveSchemaType,
  SchemaType,
} from '@vlink/bag-core';
import { sanitizeCounterTable } from '@vlink/bag-core/internal';
import type { Info, UrlKind, UrlMeta } from '@vlink/bag-core';
import type { McapFileReader } from '../mcap/mcap-reader.js';
import { MAGIC } from '../mcap/constants.js';
import type { Channel, Statistics } from '../mcap/records.js';
import type { HeaderFallback } from '../maintenance/vlink-header.js';
import { headerIntact } from './header-crc.js';
import { headerRecord, missingHeader, renamedHeader, trustedHeader } from './header-recovery.js';
import { CHANNEL_METADATA_PREFIX, COUNTERS_METADATA, HEADER_METADATA, VLINK_PROFILE } from './vcap-format.js';

/** What frames of one channel carry besides data and time. */
export interface ChannelTemplate {
  url: string;
  actionType: ActionType;
  serType: string;
  schemaType: SchemaType;
}

export interface VcapLayout {
  info: Info;
  /** Recording start in ns since the epoch (possibly lowered to the first message, format reference §5.4 step 5). */
  startNs: bigint;
  /** By channel id. */
  templates: Map<number, ChannelTemplate>;
  /** Whether the file follows VLink's profile (else a foreign MCAP file, read-only). */
  vlink: boolean;
  /** The damaged name the VLinkHeader was found under (see `isHeaderMetadata`), when not its own. */
  headerName?: string;
  /** Where a tryToFix read took the start from when the file has no VLinkHeader (`missingHeader`). */
  headerProblem?: string;
}

const UNKNOWN = 'Unknown';

export interface DescribeOptions {
  /** Whether a VLinkHeader's `header_crc32` is checked (ReaderOptions.verifyCrc; default true). */
  verifyCrc?: boolean;
  /**
   * Where a damaged VLinkHeader's values may be confirmed (with `tryToFix`), given the file's statistics: its own
   * Statistics record (`fromSummary`), or what a scan of the data section counted when the summary was lost too,
   * which lacks the messages the damage took.
   */
  confirmedHeader?: (statistics: Statistics, fromSummary: boolean) => HeaderFallback | undefined;
}

/**
 * Recovers a `.vcap`'s Info and per-channel frame templates as VLink's reader does (format reference §5.4). Foreign MCAP files
 * (any other profile) get urls from topics, sers from schema names, families from schema or message encodings and a
 * start time at their first message.
 */
export function describeVcap(
  reader: McapFileReader,
  path: string,
  fileSize: number,
  tryToFix: boolean,
  options: DescribeOptions = {},
): VcapLayout {
  // A `.vcap` that holds a VLinkHeader is VLink's whatever its profile says: one garbled byte of the profile made a
  // recording read as a foreign MCAP, its start the first message, every frame moved (fuzz `.vcap` seed 82 #3313).
  const profileDamaged =
    reader.header.profile !== VLINK_PROFILE && reader.metadataLocations.some((m) => m.name === HEADER_METADATA);
  if (profileDamaged && !tryToFix)
    throw new BagError(
      'CORRUPT_FILE',
      `the MCAP header's profile is ${JSON.stringify(reader.header.profile)}, not "vlink", yet the file holds a VLinkHeader: a damaged .vcap, or an .mcap renamed .vcap (open with tryToFix, or run fix; an .mcap reads as one under its own name)`,
      { file: path, offset: MAGIC.length },
    );
  const vlink = reader.header.profile === VLINK_PROFILE || profileDamaged;
  let complete =
    !profileDamaged &&
    reader.mode !== 'recovered' &&
    reader.damagedChunks === 0 &&
    reader.strayMessages === 0 &&
    reader.copiedChunks === 0;

  const stats: Statistics = reader.statistics;
  if (!reader.fileStatistics) {
    if (vlink && !tryToFix)
      throw new BagError('CORRUPT_FILE', 'vcap file has no Statistics record (open with tryToFix)', { file: path });
    complete = false;
  }
  const firstMs = stats.messageCount > 0n ? Number(stats.messageStartTime / 1_000_000n) : undefined;
  const lastMs = stats.messageCount > 0n ? Number(stats.messageEndTime / 1_000_000n) : undefined;

  // VLinkHeader (step 4).
  let version = '0.0.0';
  let compressionType = UNKNOWN;
  let processName = UNKNOWN;
  let dateTime = UNKNOWN;
  let tagName = 'Empty';
  let timezone = 0;
  let startTimestamp: number | undefined;
  let headerName: string | undefined;
  let headerProblem: string | undefined;
  if (vlink) {
    let header: ReadonlyMap<string, string> | undefined = headerRecord(reader, tryToFix);
    if (!header) {
      complete = false;
      const first = renamedHeader(reader);
      if (first) [headerName, header] = [first.name, first.metadata];
      else if (tryToFix) ({ header, problem: headerProblem } = missingHeader(reader, stats, options));
    }
    if (header && headerIntact(header) === false && options.verifyCrc !== false) {
      const name = headerName ?? HEADER_METADATA;
      const offset = reader.metadataLocations.find((m) => m.name === name)?.offset;
      // The summary's own Statistics where there are some: a scan despite the summary (a chunk that does not read)
      // counts only what it read, which the sidecar's facts do not match (fuzz .vcap seed 62 #2366 again).
      const fromSummary = reader.fileStatistics !== undefined;
      header = trustedHeader(header, reader.fileStatistics ?? stats, { path, offset, tryToFix, options, fromSummary });
      complete = false;
    }
    const get = (key: string) => {
      const value = header?.get(key);
      if (!value) complete = false;
      return value || undefined;
    };
    const v = get('version');
    if (v !== undefined) {
      if (Number.parseInt(v, 10) !== FORMAT_VERSION.major) {
        throw new BagError('VERSION_MISMATCH', `vcap version ${v} is not ${FORMAT_VERSION.major}.x`, { file: path });
      }
      version = v;
    }
    compressionType = get('compress') ?? UNKNOWN;
    processName = get('process') ?? UNKNOWN;
    dateTime = get('date') ?? UNKNOWN;
    const tz = get('timezone');
    timezone = tz === undefined ? 0 : (toInt(tz) ?? 0);
    tagName = header?.get('tag') || 'Empty';
    const start = header?.get('start_timestamp');
    startTimestamp = start ? toInt(start) : undefined;
    if (startTimestamp === undefined) {
      startTimestamp = dateTime !== UNKNOWN ? parseVlinkDate(dateTime) : undefined;
      complete = false;
    }
    // Our choice where VLink would use 0: without any start, the first message is the start.
    startTimestamp ??= firstMs ?? 0;
  } else {
    startTimestamp = firstMs ?? 0;
    dateTime = formatVlinkDate(startTimestamp);
    timezone = localTimezoneMinutes(startTimestamp);
    const compressions = new Set(reader.chunkIndexes.map((c) => c.compression || 'None'));
    compressionType = compressions.size ? [...compressions].sort().join(',') : 'None';
  }

  // Durations (step 5). The lowering only applies when there are messages: an empty file keeps its start.
  let blankDuration = 0;
  let totalDuration = 0;
  if (firstMs !== undefined && lastMs !== undefined) {
    blankDuration = firstMs - startTimestamp;
    if (blankDuration < 0) {
      blankDuration = 0;
      startTimestamp = firstMs;
    }
    totalDuration = Math.max(0, lastMs - startTimestamp);
  }

  // Url metas (steps 6 and 7).
  const counts = stats.channelMessageCounts;
  const metas = new Map<number, UrlMeta & { actionType: ActionType }>();
  if (vlink) {
    for (const loc of reader.metadataLocations) {
      if (!loc.name.startsWith(CHANNEL_METADATA_PREFIX)) continue;
      const idText = loc.name.slice(CHANNEL_METADATA_PREFIX.length);
      const id = /^\d+$/.test(idText) ? Number(idText) : NaN;
      const channel = reader.channels.get(id);
      const m = reader.readMetadata(loc).metadata;
      if (!channel || !counts.has(id) || m.get('index') !== String(id - 1) || metas.has(id)) {
        complete = false;
        continue;
      }
      const schema = reader.schemas.get(channel.schemaId);
      const ser = m.has('ser') ? m.get('ser')! : (schema?.name ?? '');
      const family = m.has('encoding')
        ? resolveSchemaType(parseSchemaType(m.get('encoding')), ser, schema?.encoding)
        : familyOf(reader, channel);
      const actionType = parseAction(m.get('action') ?? channel.metadata.get('action'));
      metas.set(id, {
        index: id - 1,
        url: channel.topic,
        type: (m.get('type') as UrlKind) || 'Unknown',
        action: actionText(actionType),
        ser,
        schemaType: family,
        // A file read by a recovery scan (with tryToFix) counts what the scan read: the record's count includes what
        // the damage took, which `vcap.problems` tells.
        count: (reader.mode === 'recovered' ? undefined : toInt(m.get('count'))) ?? Number(counts.get(id) ?? 0n),
        size: toNumber(m.get('size')),
        loss: toNumber(m.get('loss')),
        freq: toNumber(m.get('freq')),
        actionType,
      });
    }
  }
  const ordered = [...reader.channels.values()].sort((a, b) => a.id - b.id);
  for (const [ordinal, channel] of ordered.entries()) {
    if (metas.has(channel.id)) continue;
    // A VLink file closed cleanly has a VLinkChannel_* for every channel; a crash leaves none (step 7).
    if (vlink && reader.mode === 'indexed' && (counts.get(channel.id) ?? 0n) > 0n) complete = false;
    const actionType = parseAction(channel.metadata.get('action'));
    metas.set(channel.id, {
      // VLink: id − 1. Foreign writers may number channels from 0, so there the index is the channel's rank.
      index: vlink ? channel.id - 1 : ordinal,
      url: channel.topic,
      type: 'Event',
      action: actionText(actionType),
      // vlink-bag writers put `ser` and `encoding` in the channel record too (kept when VLinkChannel_* are lost).
      ser: channel.metadata.get('ser') ?? reader.schemas.get(channel.schemaId)?.name ?? '',
      schemaType: channel.metadata.has('encoding')
        ? resolveSchemaType(parseSchemaType(channel.metadata.get('encoding')), channel.metadata.get('ser') ?? '')
        : familyOf(reader, channel),
      count: Number(counts.get(channel.id) ?? 0n),
      size: 0,
      loss: 0,
      freq: 0,
      actionType,
    });
  }

  // Url-keyed ser and family (step 8): conflicts make the value unknown; "Bytes" and "" yield to a specific ser.
  const serByUrl = new Map<string, string | null>();
  const familyByUrl = new Map<string, SchemaType | null>();
  for (const m of metas.values()) {
    const s = serByUrl.get(m.url);
    if (s === undefined || s === '' || s === 'Bytes') serByUrl.set(m.url, m.ser || s || '');
    else if (s !== null && m.ser && m.ser !== 'Bytes' && m.ser !== s) serByUrl.set(m.url, null);
    const f = familyByUrl.get(m.url);
    if (f === undefined || f === SchemaType.Unknown) familyByUrl.set(m.url, m.schemaType);
    else if (f !== null && m.schemaType !== SchemaType.Unknown && m.schemaType !== f) familyByUrl.set(m.url, null);
  }
  const templates = new Map<number, ChannelTemplate>();
  for (const [id, m] of metas) {
    templates.set(id, {
      url: m.url,
      actionType: m.actionType,
      serType: serByUrl.get(m.url) ?? '',
      schemaType: familyByUrl.get(m.url) ?? SchemaType.Unknown,
    });
  }
  const urls: UrlMeta[] = [...metas.values()]
    .sort((a, b) => a.index - b.index)
    .map(({ actionType: _, ...meta }) => meta);

  const info: Info = {
    path,
    format: 'vcap',
    version,
    storageType: vlink ? 'vcap' : 'mcap',
    messageCount: Number(stats.messageCount),
    totalDuration,
    blankDuration,
    timeAccuracy: 'MicroSecond',
    compressionType,
    processName,
    dateTime,
    tagName,
    hasCompleted: complete,
    timezone,
    startTimestamp,
    splitCount: 1,
    splitBySize: 0,
    splitByTime: 0,
    hasSchema: [...reader.schemas.values()].some((s) => s.data.length > 0),
    totalRawSize: urls.reduce((sum, u) => sum + u.size, 0),
    fileSize,
    urls,
  };
  const counters = readCounters(reader);
  if (counters) info.counters = counters;
  return {
    info,
    startNs: BigInt(startTimestamp) * 1_000_000n,
    templates,
    vlink,
    ...(headerName === undefined ? {} : { headerName }),
    ...(headerProblem === undefined ? {} : { headerProblem }),
  };
}

/** The last `VLinkBagCounters` record (vlink-bag, format reference §5.5): url → JSON cause → count. */
function readCounters(reader: McapFileReader): Record<string, Record<string, number>> | undefined {
  let record: ReadonlyMap<string, string> | undefined;
  try {
    record = reader.metadata(COUNTERS_METADATA).at(-1)?.metadata;
  } catch {
    return undefined; // a damaged record says nothing
  }
  if (!record) return undefined;
  const table: Record<string, unknown> = {};
  for (const [url, json] of record) {
    try {
      table[url] = JSON.parse(json) as unknown;
    } catch {
      // a garbled entry is left out
    }
  }
  const clean = sanitizeCounterTable(table);
  return Object.keys(clean).length > 0 ? clean : undefined;
}

/** Family from the channel's schema encoding, else from its message encoding (foreign files). */
function familyOf(reader: McapFileReader, channel: Channel): SchemaType {
  const schema = reader.schemas.get(channel.schemaId);
  const fromSchema = encodingFamily(schema?.encoding);
  return fromSchema !== SchemaType.Unknown ? fromSchema : encodingFamily(channel.messageEncoding);
}

/** VLink's labels plus MCAP's well-known encodings (ros2msg/ros2idl/cdr → Cdr, jsonschema/json → Raw). */
function encodingFamily(encoding: string | undefined): SchemaType {
  if (!encoding) return SchemaType.Unknown;
  const known = parseSchemaType(encoding);
  if (known !== SchemaType.Unknown) return known;
  return encoding.trim().toLowerCase() === 'jsonschema' ? SchemaType.Raw : SchemaType.Unknown;
}

function toInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*-?\d+\s*$/.test(text)) return undefined;
  return Number.parseInt(text, 10);
}

function toNumber(text: string | undefined): number {
  const n = text === undefined ? NaN : Number.parseFloat(text);
  return Number.isFinite(n) ? n : 0;
}
