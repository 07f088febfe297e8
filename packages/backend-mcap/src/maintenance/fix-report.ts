import type { Channel, Metadata } from '../mcap/records.js';
import type { ChannelTally } from './vlink-channel-meta.js';

/** What a repair kept of one channel and what it lost. */
export interface ChannelRepair {
  channelId: number;
  topic: string;
  /** The channel's `action` metadata (VLink files), else undefined. */
  action: string | undefined;
  keptMessages: number;
  /** Payload bytes kept. */
  keptBytes: number;
  /**
   * Messages known to be lost: in chunks dropped whole (counted from their records or message indexes), cut at the
   * end of a salvaged chunk, or missing against what the file's own statistics or `VLinkChannel_*` record said.
   */
  lostMessages: number;
  /** Payload bytes lost: what the channel's `VLinkChannel_*` record said beyond what was kept (0 without one). */
  lostBytes: number;
}

/** What a repair kept and what it had to leave out. */
export interface VcapFixReport {
  /** Messages in the repaired file. */
  kept: number;
  /** Per channel (id order): kept and lost. */
  channels: ChannelRepair[];
  /** Messages known to be lost, all channels (see `ChannelRepair.lostMessages`); some losses cannot be counted. */
  lostMessages: number;
  /** Chunks cut short or undecodable whose complete records were taken out and kept. */
  salvagedChunks: number;
  /** What went wrong where: one line per dropped or salvaged stretch (the first 100). */
  problems: string[];
  /** Chunk records that did not decode (bad CRC, compression or structure) and were left out with their messages. */
  droppedChunks: number;
  /** Data-section bytes left out: damaged chunks and records, unreadable stretches, a truncated tail. */
  droppedBytes: number;
  /** Messages of otherwise intact chunks left out because their channel record was lost with a damaged chunk. */
  droppedMessages: number;
  /** `VLinkChannel_*` records written or corrected from the channels and the counts (VLink files only). */
  rebuiltChannelMetadata: number;
  /**
   * The `VLinkHeader` was lost or had unusable values and was written again: usable values kept, the rest from the
   * summary sidecar where it agrees with the file (see `headerFallback`), derived (date and start from each other, or
   * the start from the first message) or placeholders (process `Unknown`, timezone 0); a problem line says which.
   */
  rebuiltHeader: boolean;
  /** False when the file already passed `check()` and was left alone. */
  rewritten: boolean;
}

/** A report before the rebuild: nothing kept or lost yet, `rewritten` (a report of a file left alone says false). */
export function emptyFixReport(): VcapFixReport {
  return {
    kept: 0,
    channels: [],
    lostMessages: 0,
    salvagedChunks: 0,
    problems: [],
    droppedChunks: 0,
    droppedBytes: 0,
    droppedMessages: 0,
    rebuiltChannelMetadata: 0,
    rebuiltHeader: false,
    rewritten: true,
  };
}

/**
 * Kept and lost per channel (id order), lost at least what the file's own counts say is missing: its statistics
 * (`expected`), else the `count` of its `VLinkChannel_*` record; lost bytes from that record's `size`. A channel
 * whose record was lost but whose messages were counted as lost still gets a line (topic unknown).
 */
export function channelRepairs(
  channels: ReadonlyMap<number, Channel>,
  tallies: ReadonlyMap<number, ChannelTally>,
  lostMessages: ReadonlyMap<number, number>,
  expected: ReadonlyMap<number, number> | undefined,
  channelMetadata: ReadonlyMap<number, Metadata>,
): ChannelRepair[] {
  const said = new Map(expected ?? []);
  const saidSize = new Map<number, number>();
  for (const [id, m] of channelMetadata) {
    const count = Number(m.metadata.get('count'));
    const size = Number(m.metadata.get('size'));
    if (!said.has(id) && Number.isSafeInteger(count) && count >= 0) said.set(id, count);
    if (Number.isSafeInteger(size) && size >= 0) saidSize.set(id, size);
  }
  const ids = new Set([...channels.keys(), ...lostMessages.keys(), ...said.keys()]);
  return [...ids]
    .sort((a, b) => a - b)
    .map((id) => {
      const channel = channels.get(id);
      const tally = tallies.get(id);
      const kept = tally?.count ?? 0;
      const lost = Math.max(lostMessages.get(id) ?? 0, (said.get(id) ?? 0) - kept);
      return {
        channelId: id,
        topic: channel?.topic ?? '',
        action: channel?.metadata.get('action'),
        keptMessages: kept,
        keptBytes: tally?.size ?? 0,
        lostMessages: lost,
        lostBytes: Math.max(0, (saidSize.get(id) ?? 0) - (tally?.size ?? 0)),
      };
    });
}
