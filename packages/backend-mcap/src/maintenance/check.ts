import type { ProgressCallback } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { crc32Append } from '../mcap/crc32.js';
import { readHeader, readSummary, type Summary } from '../mcap/summary.js';
import { HEADER_METADATA, VLINK_PROFILE } from '../vcap/vcap-format.js';
import { checkMessageIndexes, scanDataSection } from './check-data-section.js';
import { errorMessage } from './check-problems.js';
import { checkSummaryAgainstData } from './check-summary.js';
import { checkVlinkMetadata } from './check-vlink-metadata.js';

/** What `check()` found; `ok` is true when `problems` is empty. */
export interface VcapCheckReport {
  ok: boolean;
  /** One line per problem (the first 100). */
  problems: string[];
  /** The same problems with the byte offset each is at, when known. */
  located: Array<{ text: string; offset: number | undefined }>;
  /** Problems beyond the first 100. */
  more: number;
  /** Messages and chunks found in the data section. */
  messages: number;
  chunks: number;
}

const MAX_PROBLEMS = 100;

/**
 * Validates a whole `.vcap` (or MCAP) file beyond what opening it needs: structure of every record, chunk
 * decompression and CRCs, the data-section CRC when the file has one, and that the summary agrees with a scan of the
 * data (statistics, schemas, channels, chunk indexes with their message indexes, metadata indexes, summary offsets).
 * For VLink files also the `VLinkHeader` keys and a `VLinkChannel_<id>` per channel whose counts agree.
 */
export function checkVcapReadable(
  readable: Readable,
  codecs: Codecs,
  file?: string,
  onProgress?: ProgressCallback,
): VcapCheckReport {
  const problems: string[] = [];
  const located: Array<{ text: string; offset: number | undefined }> = [];
  let more = 0;
  const problem = (text: string, offset?: number) => {
    if (problems.length >= MAX_PROBLEMS) {
      more++;
      return;
    }
    problems.push(offset === undefined ? text : `${text} (offset ${offset})`);
    located.push({ text, offset });
  };
  const report = (messages = 0, chunks = 0): VcapCheckReport => ({
    ok: problems.length === 0,
    problems,
    located,
    more,
    messages,
    chunks,
  });

  let headerEnd: number;
  let vlink: boolean;
  let profile: string;
  try {
    const h = readHeader(readable, file);
    headerEnd = h.headerEnd;
    profile = h.header.profile;
    vlink = profile === VLINK_PROFILE;
  } catch (error) {
    problem(`header: ${errorMessage(error)}`);
    return report();
  }
  let summary: Summary | undefined;
  try {
    summary = readSummary(readable, headerEnd, file);
    if (summary.footer.summaryStart === 0n) problem('the file has no summary section');
  } catch (error) {
    problem(`footer or summary: ${errorMessage(error)}`);
  }

  // --- the data section ------------------------------------------------------------------------------------------
  const walkEnd = summary ? summary.dataEnd : readable.size();
  const data = scanDataSection(readable, headerEnd, walkEnd, codecs, file, problem, onProgress);
  checkMessageIndexes(data.chunks, problem);
  // A file that holds a VLinkHeader is VLink's whatever its profile says (see describeVcap).
  if (!vlink && data.metadata.some((m) => m.record.name === HEADER_METADATA)) {
    problem(
      `the MCAP header's profile is damaged: ${JSON.stringify(profile)}, not "vlink", in a file that holds a VLinkHeader`,
      8,
    );
    vlink = true;
  }

  const dataEnd = data.dataEnd;
  if (!dataEnd) problem('no DataEnd record');
  else {
    if (summary && summary.footer.summaryStart !== 0n && dataEnd.offset + 13 !== summary.dataEnd)
      problem('DataEnd is not the last record before the summary');
    if (dataEnd.crc !== 0) {
      const crc = data.dataCrc ?? crcOf(readable, dataEnd.offset);
      if (crc !== dataEnd.crc)
        problem(`data section CRC mismatch (stored ${dataEnd.crc}, computed ${crc})`, dataEnd.offset);
    }
  }

  // --- the summary against the data ------------------------------------------------------------------------------
  if (summary && summary.footer.summaryStart !== 0n) checkSummaryAgainstData(summary, data, vlink, readable, problem);

  if (vlink) checkVlinkMetadata(data.metadata, data.channels, data.tallies, problem);
  return report(data.messageCount, data.chunks.length);
}

/** CRC-32 of the file bytes [0, end). */
function crcOf(readable: Readable, end: number): number {
  const block = new Uint8Array(Math.min(4 * 1024 * 1024, Math.max(1, end)));
  let crc = 0;
  for (let pos = 0; pos < end; pos += block.length)
    crc = crc32Append(crc, readable.read(pos, Math.min(block.length, end - pos), block));
  return crc;
}
