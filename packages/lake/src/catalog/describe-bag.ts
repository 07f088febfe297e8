import {
  actionText,
  BagError,
  type BagSummary,
  type Frame,
  type FramesOptions,
  type Info,
  summarizeBag,
  urlTiming,
} from '@vlink/bag';
import { GAP_FACTOR } from '../layout.js';
import type { FoundBag } from './found-bag.js';

/** A `bags.parquet` row (BAG_COLUMNS): times in µs since the Unix epoch, null where the column is nullable. */
export interface BagRow {
  bag_id: string;
  location: string;
  format: string;
  size_bytes: number;
  modified: number | null;
  etag: string | null;
  start_time: number | null;
  end_time: number | null;
  duration_us: number;
  message_count: number;
  url_count: number;
  dropped: number;
  header_json: string | null;
  tags_json: string | null;
  indexed_at: number;
}

/** A `urls.parquet` row (URL_COLUMNS), times in µs since the Unix epoch. */
export interface UrlRow {
  bag_id: string;
  url: string;
  type: string | null;
  ser: string | null;
  action: string | null;
  message_count: number;
  bytes: number;
  start_time: number | null;
  end_time: number | null;
  rate_hz: number | null;
  dropped: number;
  max_gap_us: number | null;
  gap_count: number;
}

/** What `describeBag` reads: a `BagReader` fits. */
export interface DescribedSource {
  getInfo(): Info;
  frames(options?: FramesOptions): AsyncIterable<Frame>;
}

/** Fields of `info --json` that are not the recording header (per-url tables, the file's place, its records). */
const NOT_HEADER = new Set(['path', 'urls', 'streams', 'counters', 'metadata', 'attachments']);

/**
 * The catalog rows of one bag, from the very document `vlink-bag info --json` prints (core's `summarizeBag`: one pass
 * over the messages) plus the per-url gaps, computed in the same pass from the log times it sees, and the per-url
 * payload bytes, from the sizes of the payloads that pass reads (the readers have no payload-free pass, so `info
 * --json` reads them too; their bytes are not looked at). A read error met part-way is thrown with its code: a
 * catalog row never counts half a bag.
 */
export async function describeBag(
  reader: DescribedSource,
  found: FoundBag,
  indexedAtUs: number,
): Promise<{ bag: BagRow; urls: UrlRow[]; summary: BagSummary }> {
  const logTimes = new Map<string, number[]>();
  // Payload bytes per stream, summed here: `info`'s per-url size is 0 ("unknown") for MCAP, ROS 1 and 2, Apollo …
  const payloadBytes = new Map<string, number>();
  let readError: BagError | undefined;
  const source = {
    getInfo: () => reader.getInfo(),
    async *frames(options?: FramesOptions): AsyncIterable<Frame> {
      try {
        for await (const frame of reader.frames(options)) {
          const key = streamKey(frame.url, actionText(frame.actionType));
          let times = logTimes.get(key);
          if (!times) logTimes.set(key, (times = []));
          times.push(frame.timestamp);
          payloadBytes.set(key, (payloadBytes.get(key) ?? 0) + frame.data.byteLength);
          yield frame;
        }
      } catch (error) {
        readError = BagError.wrap(error, 'IO_ERROR', 'reading failed');
        throw error;
      }
    },
  };
  const summary = await summarizeBag(source);
  if (readError) throw readError;
  const startUs = Math.round(summary.startTimestamp * 1000);
  const absolute = (us: number) => startUs + Math.round(us);
  const streams = summary.streams;
  const first = streams.length > 0 ? Math.min(...streams.map((s) => s.firstLogUs)) : undefined;
  const last = streams.length > 0 ? Math.max(...streams.map((s) => s.lastLogUs)) : undefined;
  const counters = summary.counters;
  const droppedOf = (url: string) => Object.values(counters[url] ?? {}).reduce((sum, n) => sum + n, 0);
  const header = Object.fromEntries(Object.entries(summary).filter(([key]) => !NOT_HEADER.has(key)));
  const tags = { tagName: summary.tagName, metadata: summary.metadata ?? [] };
  const bag: BagRow = {
    bag_id: found.bagId,
    location: found.location,
    format: summary.format,
    size_bytes: found.size,
    modified: found.modifiedUs,
    etag: found.etag,
    start_time: first === undefined ? null : absolute(first),
    end_time: last === undefined ? null : absolute(last),
    duration_us: first === undefined || last === undefined ? 0 : Math.round(last - first),
    message_count: summary.messageCount,
    url_count: summary.urls.length,
    dropped: Object.keys(counters).reduce((sum, url) => sum + droppedOf(url), 0),
    header_json: JSON.stringify(header),
    tags_json: JSON.stringify(tags),
    indexed_at: indexedAtUs,
  };
  const urls = summary.urls.map((meta): UrlRow => {
    // Formats keyed by url + action (.vcap) have one row per stream; the others one per url, over all its actions.
    const own = streams.filter((s) => s.url === meta.url && (meta.action === undefined || s.action === meta.action));
    const count = own.reduce((sum, s) => sum + s.count, 0);
    const from = own.length > 0 ? Math.min(...own.map((s) => s.firstLogUs)) : undefined;
    const to = own.length > 0 ? Math.max(...own.map((s) => s.lastLogUs)) : undefined;
    const span = from === undefined || to === undefined ? 0 : to - from;
    // Gaps per stream (an RPC url's requests and responses interleave): the largest interval, and every gap counted.
    let maxGap: number | null = null;
    let gaps = 0;
    let bytes = 0;
    for (const s of own) {
      bytes += payloadBytes.get(streamKey(s.url, s.action)) ?? 0;
      const timing = urlTiming(s.url, logTimes.get(streamKey(s.url, s.action)) ?? [], GAP_FACTOR);
      if (timing.intervalUs) maxGap = Math.max(maxGap ?? 0, Math.round(timing.intervalUs.max));
      gaps += timing.gaps.length;
    }
    return {
      bag_id: found.bagId,
      url: meta.url,
      type: meta.type,
      ser: meta.ser,
      action: meta.action ?? null,
      message_count: meta.count,
      bytes,
      start_time: from === undefined ? null : absolute(from),
      end_time: to === undefined ? null : absolute(to),
      rate_hz: count >= 2 && span > 0 ? (count - 1) / (span / 1e6) : null,
      dropped: droppedOf(meta.url),
      max_gap_us: maxGap,
      gap_count: gaps,
    };
  });
  return { bag, urls, summary };
}

function streamKey(url: string, action: string): string {
  return `${action}\x1f${url}`;
}
