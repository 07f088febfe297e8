import { BagError, type AttachmentMeta } from '@vlink/bag-core';
import { crc32, type McapFileReader, type Readable } from '@vlink/bag-mcap';
import { corrupt } from '../common/errors.js';

const ATTACHMENT = 0x09;
const ATTACHMENT_INDEX = 0x0a;
const DATA_END = 0x0f;
const FOOTER = 0x02;
const MAGIC_LENGTH = 8;
const FOOTER_RECORD = 1 + 8 + 20;

/** Where an attachment record lies, with what its index (or the record itself) says about it. */
export interface AttachmentLocation extends AttachmentMeta {
  offset: number;
  length: number;
}

/**
 * The attachments of an MCAP file: from the summary's attachment indexes, else (no summary, or one without them) by
 * a walk over the data section's top-level records, which stops quietly at truncated bytes.
 */
export function findAttachments(mcap: McapFileReader, readable: Readable, file: string): AttachmentLocation[] {
  const footer = mcap.footer;
  if (footer && footer.summaryStart > 0n) {
    const start = Number(footer.summaryStart);
    const end = readable.size() - MAGIC_LENGTH - FOOTER_RECORD;
    const indexes: AttachmentLocation[] = [];
    try {
      walk(readable, start, end, (opcode, _at, body) => {
        if (opcode === ATTACHMENT_INDEX) indexes.push(parseIndex(body, indexes.length));
        return true;
      });
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', 'bad attachment index in the summary', { file });
    }
    const expected = mcap.fileStatistics?.attachmentCount;
    if (indexes.length > 0 || expected === 0) return indexes;
  }
  const found: AttachmentLocation[] = [];
  try {
    walk(readable, mcap.headerEnd, readable.size(), (opcode, at, body, length) => {
      if (opcode === DATA_END || opcode === FOOTER) return false;
      if (opcode === ATTACHMENT) found.push(parseRecordHead(body, at, length, found.length));
      return true;
    });
  } catch {
    // A damaged data section: the attachments before the damage are listed; the reader reports the damage itself.
  }
  return found;
}

/** The bytes of one attachment, its CRC checked when the writer stored one. */
export function readAttachment(readable: Readable, location: AttachmentLocation, file: string): Uint8Array {
  if (location.offset < 0 || location.offset + location.length > readable.size())
    throw corrupt(`attachment ${location.name} lies outside the file`, file, location.offset);
  const record = readable.read(location.offset, location.length).slice();
  if (record[0] !== ATTACHMENT)
    throw corrupt('attachment index does not point at an attachment', file, location.offset);
  const body = record.subarray(9);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  try {
    let p = 16;
    p += 4 + view.getUint32(p, true); // name
    p += 4 + view.getUint32(p, true); // media type
    const size = Number(view.getBigUint64(p, true));
    p += 8;
    if (p + size + 4 > body.length) throw new RangeError('attachment data runs past its record');
    const data = body.subarray(p, p + size);
    const crc = view.getUint32(p + size, true);
    if (crc !== 0 && crc32(record.subarray(9, 9 + p + size)) !== crc)
      throw corrupt(`attachment ${location.name} fails its CRC`, file, location.offset);
    return data;
  } catch (error) {
    if (BagError.isInstance(error)) throw error;
    throw corrupt(`bad attachment record (${(error as Error).message})`, file, location.offset, error);
  }
}

/** Calls `visit(opcode, offset, body, recordLength)` for each record in [start, end) until it returns false. */
function walk(
  readable: Readable,
  start: number,
  end: number,
  visit: (opcode: number, at: number, body: Uint8Array, length: number) => boolean,
): void {
  const head = new Uint8Array(9);
  for (let at = start; at + 9 <= end; ) {
    const prefix = readable.read(at, 9, head);
    const length = Number(new DataView(prefix.buffer, prefix.byteOffset, 9).getBigUint64(1, true));
    if (at + 9 + length > end) return;
    const opcode = prefix[0]!;
    // Only the records we parse are read whole; chunks and messages are skipped by their length.
    const wanted = opcode === ATTACHMENT_INDEX || opcode === ATTACHMENT;
    const body = wanted ? readable.read(at + 9, Math.min(length, opcode === ATTACHMENT ? 4096 : length)).slice() : head;
    if (!visit(opcode, at, body, 9 + length)) return;
    at += 9 + length;
  }
}

const decoder = new TextDecoder();

function text(view: DataView, bytes: Uint8Array, p: number): [string, number] {
  const n = view.getUint32(p, true);
  return [decoder.decode(bytes.subarray(p + 4, p + 4 + n)), p + 4 + n];
}

function parseIndex(body: Uint8Array, index: number): AttachmentLocation {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const [name, p] = text(view, body, 40);
  const [mediaType] = text(view, body, p);
  return {
    index,
    name,
    mediaType,
    logTime: view.getBigUint64(16, true).toString(),
    createTime: view.getBigUint64(24, true).toString(),
    size: Number(view.getBigUint64(32, true)),
    offset: Number(view.getBigUint64(0, true)),
    length: Number(view.getBigUint64(8, true)),
  };
}

/** An attachment record found by the walk (its first 4 KiB are enough for the names and the data length). */
function parseRecordHead(body: Uint8Array, at: number, length: number, index: number): AttachmentLocation {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const [name, p] = text(view, body, 16);
  const [mediaType, q] = text(view, body, p);
  return {
    index,
    name,
    mediaType,
    logTime: view.getBigUint64(0, true).toString(),
    createTime: view.getBigUint64(8, true).toString(),
    size: Number(view.getBigUint64(q, true)),
    offset: at,
    length,
  };
}
