import {
  ActionType,
  BagError,
  type CursorQuery,
  type Frame,
  type InfoMetadata,
  parseAction,
  type ReaderOptions,
  type SchemaData,
  type SchemaType,
  problemsRecord,
} from '@vlink/bag-core';
import { sanitizeCounterTable } from '@vlink/bag-core/internal';
import {
  type Channel,
  type Codecs,
  COUNTERS_METADATA,
  FileReadable,
  HEADER_METADATA,
  headerIntact,
  McapFileReader,
  type Metadata,
  PLAIN_ACTION_KEY,
  PLAIN_SER_KEY,
  type Readable,
  readableThroughout,
  recoveryProblems,
  unfinishedNote,
  VLINK_PROFILE,
  VcapReader,
} from '@vlink/bag-mcap';
import { familyOf } from '../common/encodings.js';
import { damaged } from '../common/errors.js';
import { readMetadata } from '../common/mcap-recovery.js';
import { mcapMessageSpan } from '../common/mcap-span.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader, keysForUrls } from '../common/reader-base.js';
import { TimeBase } from '../common/time-base.js';
import { type AttachmentLocation, findAttachments, readAttachment } from './attachments.js';
import { closingOnError, reusableFrame } from '../common/reader-helpers.js';
import { compressionOf, messagePayload } from '../ros2/compression.js';
import { serializedMetadata } from '../ros2/mcap-storage.js';
import { parseStorageMetadata, type Ros2Metadata } from '../ros2/metadata-yaml.js';

interface ChannelTemplate {
  url: string;
  serType: string;
  schemaType: SchemaType;
  actionType: ActionType;
  /** Serialized as CDR: a payload that begins with zstd's magic is a compressed one (rosbag2's `message` mode). */
  cdr: boolean;
}

/**
 * Any MCAP file through the Backend seam (`@vlink/bag-mcap`'s record reader underneath): topic → url, schema name →
 * ser, encodings → family, `log_time` → timestamp and `publish_time` → publishTime (µs since the start, floored),
 * `sequence`, metadata records and attachments into Info. Messages come in log-time order, ties in file order, as
 * the reference readers give them (`@mcap/core`'s indexed reader, the `mcap` CLI, rosbag2). Files of the VLink
 * profile are handed to `VcapReader`, which knows VLink's channel metadata (actions, losses) and reads in file order
 * as VLink does.
 */
export class McapForeignReader extends ForeignReader {
  private readonly byId: Array<ChannelTemplate | undefined> = [];
  private readonly urlOf = new Map<number, string>();

  private constructor(
    path: string,
    private readonly mcap: McapFileReader,
    private readonly readable: Readable,
    private readonly base: TimeBase,
    private readonly codecs: Codecs,
    /** A rosbag2 storage whose own metadata says every message is zstd-compressed (`compression_mode: message`). */
    private readonly allCompressed: boolean,
    private readonly attachmentList: AttachmentLocation[],
    channels: Map<number, ChannelTemplate>,
    facts: ReturnType<typeof foreignInfo>,
    schemas: SchemaData[],
  ) {
    super(path, facts, schemas);
    for (const [id, t] of channels) {
      this.byId[id] = t;
      this.urlOf.set(id, t.url);
    }
  }

  static open(
    path: string,
    options: ReaderOptions,
    codecs: Codecs,
    readable: Readable = new FileReadable(path),
  ): McapForeignReader | VcapReader {
    return closingOnError(readable, () => {
      const open = (more = {}) => McapFileReader.open(readable, { codecs, file: path, allowScan: () => true, ...more });
      const first = open();
      // A VLink file reads as one; the same readable serves it (a file, or a url's byte source).
      if (first.header.profile === VLINK_PROFILE) return VcapReader.open(path, options, codecs, readable);
      const { mcap, fellBack } = readableThroughout(first, open, options.tryToFix === true);
      const metadata = readMetadata(mcap, options.tryToFix === true);
      const problems = [
        ...(fellBack === undefined ? [] : [fellBack]),
        ...recoveryProblems(mcap),
        ...(metadata.unread === undefined ? [] : [metadata.unread]),
      ];
      const broken = problems.length > 0;
      if (broken && options.tryToFix !== true)
        throw damaged(
          path,
          `damaged MCAP file (${problems.join('; ')})`,
          `the ${mcap.statistics.messageCount} intact messages`,
        );
      // The recording header a vlink-bag writer puts in a plain .mcap: its start is every frame's zero, so one whose
      // CRC does not match is damage (format reference §5.6); with tryToFix it is not used (frames count from the
      // first message) and the file is incomplete.
      const header = metadata.records.find((m) => m.name === HEADER_METADATA);
      const headerDamaged =
        header !== undefined && options.verifyCrc !== false && headerIntact(header.metadata) === false;
      if (headerDamaged && options.tryToFix !== true)
        throw damaged(path, 'VLinkHeader is damaged (its header_crc32 does not match its values)', 'its frames');
      // Complete: nothing damaged, and the file was finished (a summary, or at least its footer and closing magic).
      const unfinished = unfinishedNote(mcap);
      return McapForeignReader.build(
        path,
        mcap,
        metadata.records,
        readable,
        codecs,
        !broken && unfinished === undefined && !headerDamaged,
        headerDamaged,
        unfinished === undefined ? problems : [...problems, unfinished],
      );
    });
  }

  private static build(
    path: string,
    mcap: McapFileReader,
    records: readonly Metadata[],
    readable: Readable,
    codecs: Codecs,
    complete: boolean,
    headerDamaged: boolean,
    problems: readonly string[],
  ): McapForeignReader {
    const stats = mcap.statistics;
    const span = mcapMessageSpan(mcap);
    const firstNs = span?.firstNs;
    const header = headerDamaged ? undefined : recordingHeader(records, firstNs);
    const base = header?.startMs !== undefined ? new TimeBase(header.startMs) : TimeBase.fromFirstNs(firstNs);
    const channels = new Map<number, ChannelTemplate>();
    const urls: ForeignUrl[] = [];
    const sortedSchemas = [...mcap.schemas.values()].sort((a, b) => a.id - b.id);
    const schemaIndexOf = new Map(sortedSchemas.map((s, index) => [s.id, index]));
    const ordered = [...mcap.channels.values()].sort((a, b) => a.id - b.id);
    for (const channel of ordered) {
      const t = template(mcap, channel);
      channels.set(channel.id, t);
      const schemaIndex = schemaIndexOf.get(channel.schemaId);
      urls.push({
        url: t.url,
        ser: t.serType,
        schemaType: t.schemaType,
        encoding: channel.messageEncoding,
        count: Number(stats.channelMessageCounts.get(channel.id) ?? 0n),
        size: 0,
        ...(schemaIndex === undefined ? {} : { schemaIndex }),
      });
    }
    const schemas: SchemaData[] = sortedSchemas.map((s) => ({
      name: s.name,
      encoding: s.encoding,
      schemaType: familyOf('', s.encoding),
      data: s.data,
    }));
    const attachments = findAttachments(mcap, readable, path);
    // The header, each channel's own metadata (e.g. rosbag2's QoS profiles), then the file's metadata records.
    const metadata: InfoMetadata[] = [
      metadataEntry('mcap.header', { profile: mcap.header.profile, library: mcap.header.library }),
      ...ordered
        .filter((c) => c.metadata.size > 0)
        .map((c) => ({ name: `mcap.channel.${c.topic}`, values: Object.fromEntries(c.metadata) })),
      ...records.map((m) => ({ name: m.name, values: Object.fromEntries(m.metadata) })),
      // What a tryToFix read went around, or why a file is not complete (unfinished), under the name every foreign
      // reader lists it by (`info` prints it, `check` names it).
      ...problemsRecord('mcap', problems),
    ];
    // From the chunks found, indexed or scanned: a summary without chunk indexes says nothing of them.
    const compressions = new Set(mcap.blocks.filter((b) => b.kind === 'chunk').map((b) => b.compression || 'none'));
    const facts = foreignInfo({
      path,
      format: 'mcap',
      version: '0',
      storageType: 'mcap',
      compressionType: compressions.size > 0 ? [...compressions].sort().join(',') : 'none',
      processName: header?.process || mcap.header.library,
      ...(header?.tag ? { tagName: header.tag } : {}),
      ...(header?.timezone !== undefined ? { timezone: header.timezone } : {}),
      base,
      firstNs,
      lastNs: span?.lastNs,
      hasCompleted: complete,
      fileSize: readable.size(),
      hasSchema: schemas.some((s) => s.data.length > 0),
      urls,
      metadata,
      attachments: attachments.map(({ offset: _o, length: _l, ...meta }) => meta),
    });
    const counters = countersOf(records);
    if (counters) facts.counters = counters;
    const allCompressed = compressedPerMessage(records, path);
    return new McapForeignReader(
      path,
      mcap,
      readable,
      base,
      codecs,
      allCompressed,
      attachments,
      channels,
      facts,
      schemas,
    );
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.ensureOpen();
    const channelIds = keysForUrls(this.urlOf, query.urls);
    if (channelIds?.length === 0) return;
    const { beginUs, endUs } = query;
    const startTime = beginUs === undefined ? undefined : this.base.nsAtUs(beginUs);
    const endTime = endUs === undefined ? undefined : this.base.nsAtEndOfUs(endUs);
    if (startTime !== undefined && endTime !== undefined && startTime > endTime) return;
    const cursor = this.mcap.cursor({
      order: 'log-time',
      ...(startTime === undefined ? {} : { startTime: startTime < 0n ? 0n : startTime }),
      ...(endTime === undefined ? {} : { endTime }),
      ...(channelIds ? { channelIds } : {}),
    });
    const frame = reusableFrame({ data: cursor.data, publishTime: 0, sequence: 0 });
    const byId = this.byId;
    const base = this.base;
    const { codecs, allCompressed } = this;
    while (cursor.next()) {
      const t = byId[cursor.channelId];
      if (t === undefined) continue; // a message of a channel the file never defined: no url to give it
      frame.timestamp = base.usFromHalves(cursor.timeHi, cursor.timeLo);
      frame.publishTime = base.usFromHalves(cursor.publishHi, cursor.publishLo);
      frame.sequence = cursor.sequence;
      frame.url = t.url;
      frame.data =
        t.cdr || allCompressed
          ? messagePayload(cursor.data, t.cdr, allCompressed, codecs, { file: this.path, url: t.url })
          : cursor.data;
      frame.serType = t.serType;
      frame.schemaType = t.schemaType;
      frame.actionType = t.actionType;
      yield frame;
      if (this.closed) return;
    }
  }

  attachment(index: number): Uint8Array {
    this.ensureOpen();
    const location = this.attachmentList[index];
    if (!location) throw new BagError('NOT_FOUND', `no attachment ${index}`, { file: this.path });
    return readAttachment(this.readable, location, this.path);
  }

  protected release(): void {
    this.mcap.close();
  }
}

function template(mcap: McapFileReader, channel: Channel): ChannelTemplate {
  const schema = channel.schemaId === 0 ? undefined : mcap.schemas.get(channel.schemaId);
  return {
    url: channel.topic,
    // vlink-bag's plain `.mcap` names in the channel metadata a type no schema record names, and actions but Pub.
    serType: channel.metadata.get(PLAIN_SER_KEY) ?? schema?.name ?? '',
    actionType: channel.metadata.has(PLAIN_ACTION_KEY)
      ? parseAction(channel.metadata.get(PLAIN_ACTION_KEY))
      : ActionType.Publish,
    schemaType: familyOf(channel.messageEncoding, schema?.encoding),
    cdr: channel.messageEncoding.toLowerCase() === 'cdr',
  };
}

/**
 * Whether this is a rosbag2 storage file whose own copy of the bag's metadata says every message is compressed on
 * its own (`compression_mode: message`): opened without its folder's metadata.yaml, it is the file's word on it. A
 * format rosbag2 has no plugin for is refused by name (UNSUPPORTED_FORMAT). A copy that does not parse says nothing,
 * and then the payloads of `cdr` channels still tell (see messagePayload).
 */
function compressedPerMessage(records: readonly Metadata[], path: string): boolean {
  const text = serializedMetadata(records);
  if (text === undefined) return false;
  let metadata: Ros2Metadata;
  try {
    metadata = parseStorageMetadata(text, path);
  } catch {
    return false;
  }
  return metadata.compressionMode.toLowerCase() === 'message' && compressionOf(metadata, path) === 'message';
}

/**
 * The counters by cause vlink-bag writes into a plain `.mcap` (the last `VLinkBagCounters` metadata record, as in
 * `.vcap`, format reference §5.5): url → JSON cause → count. Garbled entries are left out.
 */
function countersOf(records: readonly Metadata[]): Record<string, Record<string, number>> | undefined {
  const record = records.filter((m) => m.name === COUNTERS_METADATA).at(-1);
  if (!record) return undefined;
  const table: Record<string, unknown> = {};
  for (const [url, json] of record.metadata) {
    try {
      table[url] = JSON.parse(json) as unknown;
    } catch {
      // a garbled entry says nothing
    }
  }
  const clean = sanitizeCounterTable(table);
  return Object.keys(clean).length > 0 ? clean : undefined;
}

/**
 * The recording header vlink-bag writes into a plain `.mcap` (a `VLinkHeader` metadata record, as in `.vcap`): tag,
 * process, timezone and the recording start, so a `clone` to `.mcap` and back keeps them. The start is used only when
 * it is not after the first message (frames keep non-negative times).
 */
function recordingHeader(
  records: readonly Metadata[],
  firstNs: bigint | undefined,
): { tag?: string; process?: string; timezone?: number; startMs?: number } | undefined {
  const record = records.find((m) => m.name === HEADER_METADATA);
  if (!record) return undefined;
  const values = record.metadata;
  const timezone = Number(values.get('timezone'));
  const start = Number(values.get('start_timestamp'));
  const startFits =
    Number.isSafeInteger(start) && start >= 0 && (firstNs === undefined || BigInt(start) * 1_000_000n <= firstNs);
  return {
    ...(values.get('tag') ? { tag: values.get('tag')! } : {}),
    ...(values.get('process') ? { process: values.get('process')! } : {}),
    ...(values.has('timezone') && Number.isInteger(timezone) ? { timezone } : {}),
    ...(startFits ? { startMs: start } : {}),
  };
}
