import { BagError } from '@vlink/bag-core';
import type { McapFileReader } from '../mcap/mcap-reader.js';
import type { Metadata, Statistics } from '../mcap/records.js';
import type { HeaderFallback } from '../maintenance/vlink-header.js';
import { HEADER_METADATA, isHeaderMetadata } from './vcap-format.js';
import type { DescribeOptions } from './vcap-info.js';

/*
 * A `.vcap`'s VLinkHeader when its record is damaged: every frame time counts from its `start_timestamp`, so a
 * header that cannot be trusted, or none at all, moves every frame. Where a source outside the file (the summary
 * sidecar, a split recording's manifest) confirms the values, they are taken; else the file reads as incomplete, and
 * the reader's problems (a lost header) or `check` (a damaged one) say why.
 */

/** The VLinkHeader's values; with `tryToFix`, none where the record the summary points at does not read. */
export function headerRecord(reader: McapFileReader, tryToFix: boolean): ReadonlyMap<string, string> | undefined {
  try {
    return reader.metadata(HEADER_METADATA)[0]?.metadata;
  } catch (error) {
    if (!tryToFix || !BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
    return undefined;
  }
}

/** The file's first metadata record when it is a VLinkHeader under a damaged name (undefined when it is not). */
export function renamedHeader(reader: McapFileReader): Metadata | undefined {
  const first = [...reader.metadataLocations].sort((a, b) => a.offset - b.offset)[0];
  if (!first) return undefined;
  try {
    const record = reader.readMetadata(first);
    return isHeaderMetadata(record.name, record.metadata) ? record : undefined;
  } catch {
    return undefined; // a damaged record is no header
  }
}

/**
 * A VLinkHeader whose CRC says it is damaged (see header-crc.ts): without `tryToFix` a typed error, since every frame
 * time counts from its start; with it, the values confirmed from outside the file where there are some (else its own,
 * which may be wrong: the file is then incomplete and `check` says why).
 */
export function trustedHeader(
  header: ReadonlyMap<string, string>,
  stats: Statistics,
  context: {
    path: string;
    offset: number | undefined;
    tryToFix: boolean;
    options: DescribeOptions;
    fromSummary: boolean;
  },
): ReadonlyMap<string, string> {
  if (!context.tryToFix)
    throw new BagError(
      'CORRUPT_FILE',
      'VLinkHeader is damaged (its header_crc32 does not match its values): the recording start, and with it every frame time, cannot be trusted (open with tryToFix, or run fix)',
      { file: context.path, ...(context.offset === undefined ? {} : { offset: context.offset }) },
    );
  const confirmed = context.options.confirmedHeader?.(stats, context.fromSummary);
  return confirmed ? withConfirmedValues(header, confirmed) : header;
}

/**
 * No VLinkHeader at all (its record damaged past reading), read with `tryToFix`: the values confirmed from outside the
 * file where there are some, else none (the start is then the first message). Before, every frame read early by the
 * recording's lead, as sound (fuzz `.vcap` seed 1484 #4399: the header's opcode flipped, every frame 1 ms early).
 */
export function missingHeader(
  reader: McapFileReader,
  stats: Statistics,
  options: DescribeOptions,
): { header: ReadonlyMap<string, string> | undefined; problem: string } {
  const confirmed = options.confirmedHeader?.(reader.fileStatistics ?? stats, reader.fileStatistics !== undefined);
  if (confirmed)
    return {
      header: withConfirmedValues(new Map(), confirmed),
      problem: `the VLinkHeader is lost: the recording start, tag, process and timezone are those of ${confirmed.from}`,
    };
  return {
    header: undefined,
    problem:
      'the VLinkHeader is lost: the recording start is not known, every frame time counts from the first message',
  };
}

/** `header` with the values a source outside the file confirmed (`DescribeOptions.confirmedHeader`). */
function withConfirmedValues(header: ReadonlyMap<string, string>, confirmed: HeaderFallback): Map<string, string> {
  const repaired = new Map(header);
  repaired.set('start_timestamp', String(confirmed.startMs));
  if (confirmed.tag !== undefined) repaired.set('tag', confirmed.tag);
  if (confirmed.process !== undefined) repaired.set('process', confirmed.process);
  if (confirmed.timezone !== undefined) repaired.set('timezone', String(confirmed.timezone));
  if (confirmed.date !== undefined) repaired.set('date', confirmed.date);
  return repaired;
}
