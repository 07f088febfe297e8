import type { Readable } from '../io/readable.js';
import { Opcode } from '../mcap/constants.js';
import type { Header } from '../mcap/records.js';
import type { Summary } from '../mcap/summary.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, VLINK_PROFILE } from '../vcap/vcap-format.js';

const HEADER_NAME = new TextEncoder().encode(HEADER_METADATA);

/**
 * Whether a file a repair rewrites is VLink's (its profile, its VLinkHeader and VLinkChannel_* records are written
 * back): by its MCAP header's profile; where that is damaged, by the VLink metadata its surviving summary indexes; with
 * no summary either (a crashed file), by the VLinkHeader the writer puts right after the MCAP header. One garbled byte
 * of the profile otherwise made the repair write a plain MCAP whose frames counted from its first message.
 */
export function isVlinkFile(
  header: Header,
  summary: Summary | undefined,
  source: Readable,
  headerEnd: number,
): boolean {
  return (
    header.profile === VLINK_PROFILE ||
    (summary?.metadataIndexes.some((m) => m.name === HEADER_METADATA || m.name.startsWith(CHANNEL_METADATA_PREFIX)) ??
      false) ||
    startsWithVlinkHeader(source, headerEnd)
  );
}

/** Whether the record at `at` is a Metadata record named VLinkHeader (opcode, length, the name's length and bytes). */
function startsWithVlinkHeader(source: Readable, at: number): boolean {
  const want = 9 + 4 + HEADER_NAME.length;
  if (at + want > source.size()) return false;
  const bytes = source.read(at, want);
  if (bytes[0] !== Opcode.Metadata) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(9, true) !== HEADER_NAME.length) return false;
  return HEADER_NAME.every((byte, i) => bytes[13 + i] === byte);
}
