import type { Readable } from '../io/readable.js';
import { FOOTER_RECORD, MAGIC, Opcode, RECORD_PREFIX } from './constants.js';
import { asBagError, corrupt } from './corruption.js';
import { crc32 } from './crc32.js';
import { hasMagic, parseRecord, recordLengthAt } from './record-parser.js';
import type {
  AttachmentIndex,
  Channel,
  ChunkIndex,
  Footer,
  Header,
  MetadataIndex,
  Schema,
  Statistics,
  SummaryOffset,
} from './records.js';

/** Header and where the data section begins. */
export function readHeader(readable: Readable, file: string | undefined): { header: Header; headerEnd: number } {
  const size = readable.size();
  if (size < MAGIC.length + RECORD_PREFIX + 8) throw corrupt(`file of ${size} bytes is too small to be MCAP`, file, 0);
  const prefix = readable.read(0, MAGIC.length + RECORD_PREFIX);
  if (!hasMagic(prefix, 0, MAGIC)) throw corrupt('not an MCAP file (bad magic)', file, 0);
  if (prefix[MAGIC.length] !== Opcode.Header)
    throw corrupt('MCAP file does not start with a header record', file, MAGIC.length);
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  let length: number;
  try {
    length = recordLengthAt(view, MAGIC.length, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    throw asBagError(error, file, 0, 'bad header');
  }
  if (MAGIC.length + length > size) throw corrupt('header record runs past the end of the file', file, MAGIC.length);
  const bytes = readable.read(MAGIC.length, length).slice();
  try {
    const { record } = parseRecord(bytes, new DataView(bytes.buffer), 0, length);
    if (record.type !== 'Header') throw corrupt('expected a header record', file, MAGIC.length);
    return { header: record, headerEnd: MAGIC.length + length };
  } catch (error) {
    throw asBagError(error, file, MAGIC.length, 'bad header');
  }
}

export interface Summary {
  footer: Footer;
  /** File offset of the footer record. */
  footerOffset: number;
  /** Where the data section ends: the summary start, or the footer when there is no summary. */
  dataEnd: number;
  schemas: Map<number, Schema>;
  channels: Map<number, Channel>;
  statistics: Statistics | undefined;
  chunkIndexes: ChunkIndex[];
  attachmentIndexes: AttachmentIndex[];
  metadataIndexes: MetadataIndex[];
  summaryOffsets: SummaryOffset[];
}

/**
 * Reads the Footer record and the closing magic at the end of the file (`bytes`: both, as stored): there only when the
 * writer finished it (a file cut short has neither). Throws `CORRUPT_FILE` when either is missing or damaged.
 */
export function readFooter(
  readable: Readable,
  headerEnd: number,
  file: string | undefined,
): { footer: Footer; footerOffset: number; bytes: Uint8Array } {
  const size = readable.size();
  const footerOffset = size - MAGIC.length - FOOTER_RECORD;
  if (footerOffset < headerEnd) throw corrupt('no room for a footer', file, size);
  const tail = readable.read(footerOffset, FOOTER_RECORD + MAGIC.length).slice();
  if (!hasMagic(tail, FOOTER_RECORD, MAGIC))
    throw corrupt('missing trailing magic (truncated or unfinished file)', file, size - MAGIC.length);
  if (tail[0] !== Opcode.Footer) throw corrupt('missing footer record', file, footerOffset);
  const tv = new DataView(tail.buffer);
  try {
    const { record, length } = parseRecord(tail, tv, 0, FOOTER_RECORD);
    if (record.type !== 'Footer' || length !== FOOTER_RECORD) throw corrupt('bad footer record', file, footerOffset);
    return { footer: record, footerOffset, bytes: tail };
  } catch (error) {
    throw asBagError(error, file, footerOffset, 'bad footer');
  }
}

/**
 * Reads the footer and the summary section, checking the summary CRC when there is one and that every index points
 * inside the file. Throws `CORRUPT_FILE` for anything missing or inconsistent.
 */
export function readSummary(readable: Readable, headerEnd: number, file: string | undefined): Summary {
  const { footer, footerOffset, bytes: tail } = readFooter(readable, headerEnd, file);
  const summary: Summary = {
    footer,
    footerOffset,
    dataEnd: footerOffset,
    schemas: new Map(),
    channels: new Map(),
    statistics: undefined,
    chunkIndexes: [],
    attachmentIndexes: [],
    metadataIndexes: [],
    summaryOffsets: [],
  };
  if (footer.summaryStart === 0n) return summary;
  if (footer.summaryStart < BigInt(headerEnd) || footer.summaryStart > BigInt(footerOffset)) {
    throw corrupt(`summary start ${footer.summaryStart} lies outside the file`, file, footerOffset);
  }
  const start = Number(footer.summaryStart);
  summary.dataEnd = start;
  const bytes = readable.read(start, footerOffset - start).slice();
  if (footer.summaryCrc !== 0) {
    const withFooter = new Uint8Array(bytes.length + 25);
    withFooter.set(bytes);
    withFooter.set(tail.subarray(0, 25), bytes.length);
    if (crc32(withFooter) !== footer.summaryCrc) throw corrupt('summary CRC mismatch', file, start);
  }
  // An index must point at a whole record (at least its prefix) between the header and the summary.
  const inData = (offset: bigint, length: bigint): boolean =>
    offset >= BigInt(headerEnd) && offset + length <= BigInt(start) && length >= BigInt(RECORD_PREFIX);
  const view = new DataView(bytes.buffer);
  let pos = 0;
  try {
    while (pos < bytes.length) {
      const { record, length } = parseRecord(bytes, view, pos, bytes.length);
      switch (record.type) {
        case 'Schema':
          summary.schemas.set(record.id, { ...record, data: record.data.slice() });
          break;
        case 'Channel':
          summary.channels.set(record.id, record);
          break;
        case 'Statistics':
          if (summary.statistics) throw corrupt('two statistics records', file, start + pos);
          summary.statistics = record;
          break;
        case 'ChunkIndex':
          if (!inData(record.chunkStartOffset, record.chunkLength)) {
            throw corrupt('chunk index points outside the data section', file, start + pos);
          }
          summary.chunkIndexes.push(record);
          break;
        case 'AttachmentIndex':
          summary.attachmentIndexes.push(record);
          break;
        case 'MetadataIndex':
          if (!inData(record.offset, record.length)) {
            throw corrupt('metadata index points outside the data section', file, start + pos);
          }
          summary.metadataIndexes.push(record);
          break;
        case 'SummaryOffset':
          summary.summaryOffsets.push(record);
          break;
        case 'Unknown':
          break;
        default:
          throw corrupt(`${record.type} record in the summary section`, file, start + pos);
      }
      pos += length;
    }
  } catch (error) {
    throw asBagError(error, file, start, 'bad summary');
  }
  return summary;
}
