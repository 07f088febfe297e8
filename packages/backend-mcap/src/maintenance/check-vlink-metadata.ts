import { FORMAT_VERSION } from '@vlink/bag-core';
import type { Channel, Metadata } from '../mcap/records.js';
import { headerIntact } from '../vcap/header-crc.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, isHeaderMetadata } from '../vcap/vcap-format.js';
import type { ReportProblem } from './check-problems.js';
import type { ChannelTally } from './vlink-channel-meta.js';

const URL_KINDS = new Set(['Method', 'Event', 'Field', 'Unknown']);

/**
 * The VLink metadata of a `.vcap` (format reference §5.2): exactly one `VLinkHeader` with its keys and a usable version, and one
 * `VLinkChannel_<id>` per channel with messages whose index, counts and values agree with the data.
 */
export function checkVlinkMetadata(
  metadata: Array<{ record: Metadata; offset: number }>,
  channels: Map<number, Channel>,
  tallies: Map<number, ChannelTally>,
  problem: ReportProblem,
): void {
  const headers = metadata.filter((m) => m.record.name === HEADER_METADATA);
  if (headers.length !== 1) problem(`${headers.length} VLinkHeader metadata records (expected 1)`);
  const first = metadata[0];
  if (headers.length === 0 && first && isHeaderMetadata(first.record.name, first.record.metadata))
    problem(`the VLinkHeader record at ${first.offset} has a damaged name (${JSON.stringify(first.record.name)})`);
  const header = headers[0]?.record.metadata;
  if (header) {
    if (headerIntact(header) === false)
      problem(`the VLinkHeader record at ${headers[0]!.offset} is damaged: its header_crc32 does not match its values`);
    for (const key of ['version', 'compress', 'process', 'date', 'timezone'])
      if (!header.get(key)) problem(`VLinkHeader has no ${key}`);
    if (!/^\s*-?\d+\s*$/.test(header.get('start_timestamp') ?? ''))
      problem('VLinkHeader start_timestamp is not an integer');
    const major = Number.parseInt(header.get('version') ?? '', 10);
    if (header.get('version') && major !== FORMAT_VERSION.major)
      problem(`VLinkHeader version ${header.get('version')} is not ${FORMAT_VERSION.major}.x`);
  }
  const seen = new Set<number>();
  for (const { record, offset } of metadata) {
    if (!record.name.startsWith(CHANNEL_METADATA_PREFIX)) continue;
    const idText = record.name.slice(CHANNEL_METADATA_PREFIX.length);
    const id = /^\d+$/.test(idText) ? Number(idText) : NaN;
    const channel = channels.get(id);
    const m = record.metadata;
    if (!channel) {
      problem(`${record.name} at ${offset} names no channel`);
      continue;
    }
    if (seen.has(id)) problem(`two ${record.name} records`);
    seen.add(id);
    const tally = tallies.get(id);
    if (m.get('index') !== String(id - 1)) problem(`${record.name}: index ${m.get('index')} is not ${id - 1}`);
    if (m.get('count') !== String(tally?.count ?? 0))
      problem(`${record.name}: count ${m.get('count')}, the data has ${tally?.count ?? 0}`);
    if (m.get('size') !== String(tally?.size ?? 0))
      problem(`${record.name}: size ${m.get('size')}, the data has ${tally?.size ?? 0}`);
    if (!URL_KINDS.has(m.get('type') ?? ''))
      problem(`${record.name}: type "${m.get('type')}" is not Method, Event, Field or Unknown`);
    const loss = Number(m.get('loss'));
    if (!m.has('loss') || !Number.isFinite(loss) || (loss !== -1 && (loss < 0 || loss > 1)))
      problem(`${record.name}: loss "${m.get('loss')}" is not −1 or in [0, 1]`);
    const freq = Number(m.get('freq'));
    if (!m.has('freq') || !(freq >= 0) || !Number.isFinite(freq))
      problem(`${record.name}: freq "${m.get('freq')}" is not a finite number ≥ 0`);
  }
  for (const [id, tally] of tallies)
    if (tally.count > 0 && !seen.has(id))
      problem(`no ${CHANNEL_METADATA_PREFIX}${id} for channel ${id} (${tally.count} messages)`);
}
