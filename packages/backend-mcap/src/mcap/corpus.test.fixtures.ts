import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McapChunkBuilder, McapRecordBuilder, Opcode } from '@mcap/core';
import type { McapTypes } from '@mcap/core';
import { sharedFixturesDir } from '@vlink/bag-core/testing';
import { crc32, crc32Final, crc32Update, CRC32_INIT } from './crc32.js';

// Test-only (the `*.test.*` name keeps it out of the published package).
//
// The corpus in shared/fixtures/mcap-conformance may hold Git LFS pointers (`oid sha256:…`, `size …`) instead of the
// .mcap bytes. Upstream generates every .mcap from its records and a feature list, and the .json twin holds exactly
// those records, so we rebuild the file from the twin and accept it only when its size and SHA-256 match the
// pointer: the bytes we test against are then provably the upstream file.

export type JsonValue = string | string[] | Record<string, string>;
export interface JsonRecord {
  type: string;
  fields: Array<[string, JsonValue]>;
}
export interface CorpusFile {
  path: string;
  name: string;
  bytes: Uint8Array;
  records: JsonRecord[];
  features: string[];
  /** true when the bytes were rebuilt from the twin (and verified against the LFS pointer). */
  rebuilt: boolean;
}

export function loadCorpus(): CorpusFile[] {
  const root = join(sharedFixturesDir(), 'mcap-conformance');
  const out: CorpusFile[] = [];
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const f of readdirSync(join(root, dir.name)).sort()) {
      if (!f.endsWith('.mcap')) continue;
      const path = join(root, dir.name, f);
      const twin = JSON.parse(readFileSync(path.replace(/\.mcap$/, '.json'), 'utf8')) as {
        records: JsonRecord[];
        meta: { variant: { features: string[] } };
      };
      const raw = new Uint8Array(readFileSync(path));
      const pointer = parsePointer(raw);
      const features = twin.meta.variant.features;
      let bytes: Uint8Array = raw;
      if (pointer) {
        bytes = rebuild(twin.records, new Set(features));
        const sha = createHash('sha256').update(bytes).digest('hex');
        if (bytes.length !== pointer.size || sha !== pointer.oid) {
          throw new Error(
            `${path}: rebuilt ${bytes.length} bytes (sha256 ${sha}) but the LFS pointer says ${pointer.size} (${pointer.oid})`,
          );
        }
      }
      out.push({ path, name: f, bytes, records: twin.records, features, rebuilt: pointer !== undefined });
    }
  }
  return out;
}

function parsePointer(raw: Uint8Array): { oid: string; size: number } | undefined {
  if (raw.length > 512) return undefined;
  const text = new TextDecoder().decode(raw);
  if (!text.startsWith('version https://git-lfs.github.com/spec/v1')) return undefined;
  const oid = /oid sha256:([0-9a-f]{64})/.exec(text)?.[1];
  const size = /size (\d+)/.exec(text)?.[1];
  return oid && size ? { oid, size: Number(size) } : undefined;
}

function fieldsOf(r: JsonRecord): Map<string, JsonValue> {
  return new Map(r.fields);
}
const str = (v: JsonValue | undefined) => v as string;
const big = (v: JsonValue | undefined) => BigInt(v as string);
const num = (v: JsonValue | undefined) => Number(v as string);
const bytesOf = (v: JsonValue | undefined) => Uint8Array.from(v as string[], Number);
const strMap = (v: JsonValue | undefined) => new Map(Object.entries(v as Record<string, string>));

/** Writes the data records of a twin the way the corpus was generated, then DataEnd, summary and footer. */
function rebuild(records: JsonRecord[], features: Set<string>): Uint8Array {
  const out = new McapRecordBuilder({ padRecords: features.has('pad') });
  out.writeMagic();
  out.writeHeader({ profile: '', library: '' });
  const chunk = features.has('ch') ? new McapChunkBuilder({ useMessageIndex: features.has('mx') }) : undefined;
  const schemas: McapTypes.Schema[] = [];
  const channels: McapTypes.Channel[] = [];
  const metadataIndexes: McapTypes.MetadataIndex[] = [];
  const attachmentIndexes: McapTypes.AttachmentIndex[] = [];
  const chunkIndexes: McapTypes.ChunkIndex[] = [];
  const counts = new Map<number, bigint>();
  let messages = 0n;
  let attachments = 0;
  let metadataCount = 0;
  let start: bigint | undefined;
  let end: bigint | undefined;

  for (const record of records) {
    const f = fieldsOf(record);
    switch (record.type) {
      case 'Schema': {
        const s = {
          id: num(f.get('id')),
          name: str(f.get('name')),
          encoding: str(f.get('encoding')),
          data: bytesOf(f.get('data')),
        };
        if (schemas.some((x) => x.id === s.id)) break; // the repeated copy in the summary
        schemas.push(s);
        if (chunk) chunk.addSchema(s);
        else out.writeSchema(s);
        break;
      }
      case 'Channel': {
        const c = {
          id: num(f.get('id')),
          schemaId: num(f.get('schema_id')),
          topic: str(f.get('topic')),
          messageEncoding: str(f.get('message_encoding')),
          metadata: strMap(f.get('metadata')),
        };
        if (channels.some((x) => x.id === c.id)) break;
        channels.push(c);
        if (chunk) chunk.addChannel(c);
        else out.writeChannel(c);
        break;
      }
      case 'Message': {
        const m = {
          channelId: num(f.get('channel_id')),
          sequence: num(f.get('sequence')),
          logTime: big(f.get('log_time')),
          publishTime: big(f.get('publish_time')),
          data: bytesOf(f.get('data')),
        };
        messages++;
        counts.set(m.channelId, (counts.get(m.channelId) ?? 0n) + 1n);
        if (start === undefined || m.logTime < start) start = m.logTime;
        if (end === undefined || m.logTime > end) end = m.logTime;
        if (chunk) chunk.addMessage(m);
        else out.writeMessage(m);
        break;
      }
      case 'Attachment': {
        const a = {
          logTime: big(f.get('log_time')),
          createTime: big(f.get('create_time')),
          name: str(f.get('name')),
          mediaType: str(f.get('media_type')),
          data: bytesOf(f.get('data')),
        };
        attachments++;
        const offset = BigInt(out.length);
        const length = out.writeAttachment(a);
        if (features.has('ax'))
          attachmentIndexes.push({
            offset,
            length,
            logTime: a.logTime,
            createTime: a.createTime,
            dataSize: BigInt(a.data.length),
            name: a.name,
            mediaType: a.mediaType,
          });
        break;
      }
      case 'Metadata': {
        const m = { name: str(f.get('name')), metadata: strMap(f.get('metadata')) };
        metadataCount++;
        const offset = BigInt(out.length);
        const length = out.writeMetadata(m);
        if (features.has('mdx')) metadataIndexes.push({ offset, length, name: m.name });
        break;
      }
      default:
        break; // DataEnd and the summary are rebuilt below
    }
  }
  if (chunk) {
    const records = chunk.buffer;
    const chunkStartOffset = BigInt(out.length);
    const chunkLength = out.writeChunk({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      uncompressedSize: BigInt(records.length),
      uncompressedCrc: crc32(records),
      compression: '',
      records,
    });
    const messageIndexOffsets = new Map<number, bigint>();
    let messageIndexLength = 0n;
    for (const index of chunk.indices) {
      messageIndexOffsets.set(index.channelId, BigInt(out.length));
      messageIndexLength += out.writeMessageIndex(index);
    }
    if (features.has('chx')) {
      chunkIndexes.push({
        messageStartTime: chunk.messageStartTime,
        messageEndTime: chunk.messageEndTime,
        chunkStartOffset,
        chunkLength,
        messageIndexOffsets,
        messageIndexLength,
        compression: '',
        compressedSize: BigInt(records.length),
        uncompressedSize: BigInt(records.length),
      });
    }
  }
  out.writeDataEnd({ dataSectionCrc: crc32(out.buffer) });

  const summaryStart = out.length;
  const groups: Array<[opcode: number, start: number, length: number]> = [];
  const group = (opcode: number, write: () => void) => {
    const at = out.length;
    write();
    groups.push([opcode, at, out.length - at]);
  };
  group(Opcode.SCHEMA, () => features.has('rsh') && schemas.forEach((s) => out.writeSchema(s)));
  group(Opcode.CHANNEL, () => features.has('rch') && channels.forEach((c) => out.writeChannel(c)));
  group(Opcode.STATISTICS, () => {
    if (!features.has('st')) return;
    out.writeStatistics({
      messageCount: messages,
      schemaCount: schemas.length,
      channelCount: channels.length,
      attachmentCount: attachments,
      metadataCount,
      chunkCount: chunk ? 1 : 0,
      messageStartTime: start ?? 0n,
      messageEndTime: end ?? 0n,
      channelMessageCounts: counts,
    });
  });
  group(Opcode.METADATA_INDEX, () => metadataIndexes.forEach((m) => out.writeMetadataIndex(m)));
  group(Opcode.ATTACHMENT_INDEX, () => attachmentIndexes.forEach((a) => out.writeAttachmentIndex(a)));
  group(Opcode.CHUNK_INDEX, () => chunkIndexes.forEach((c) => out.writeChunkIndex(c)));
  const hasSummary = out.length !== summaryStart;
  let summaryOffsetStart = 0;
  if (features.has('sum')) {
    summaryOffsetStart = out.length;
    for (const [groupOpcode, at, length] of groups) {
      if (length > 0) out.writeSummaryOffset({ groupOpcode, groupStart: BigInt(at), groupLength: BigInt(length) });
    }
  }
  const footerPrefix = new DataView(new ArrayBuffer(25));
  footerPrefix.setUint8(0, Opcode.FOOTER);
  footerPrefix.setBigUint64(1, 20n, true);
  footerPrefix.setBigUint64(9, hasSummary ? BigInt(summaryStart) : 0n, true);
  footerPrefix.setBigUint64(17, BigInt(summaryOffsetStart), true);
  let crc = crc32Update(CRC32_INIT, out.buffer.subarray(summaryStart));
  crc = crc32Final(crc32Update(crc, new Uint8Array(footerPrefix.buffer)));
  out.writeFooter({
    summaryStart: hasSummary ? BigInt(summaryStart) : 0n,
    summaryOffsetStart: BigInt(summaryOffsetStart),
    summaryCrc: crc,
  });
  out.writeMagic();
  return out.buffer.slice();
}
