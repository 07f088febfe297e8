import assert from 'node:assert/strict';
import { before, describe, test } from '@vlink/fixtures/test';
import { loadCodecs, type Codecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { McapFileReader } from './mcap-reader.js';
import { loadCorpus, type JsonRecord, type JsonValue } from './corpus.test.helper.js';
import { streamRecords } from './record-stream.js';
import type { McapRecord } from './records.js';

// The MCAP conformance corpus (fixtures/mcap-conformance): every .mcap has a .json twin with the records a
// reader must produce. Numbers in the JSON are strings; byte arrays are arrays of strings.

const FIELDS: Record<string, string[]> = {
  Header: ['profile', 'library'],
  Footer: ['summaryStart', 'summaryOffsetStart', 'summaryCrc'],
  Schema: ['id', 'name', 'encoding', 'data'],
  Channel: ['id', 'schemaId', 'topic', 'messageEncoding', 'metadata'],
  Message: ['channelId', 'sequence', 'logTime', 'publishTime', 'data'],
  ChunkIndex: [
    'messageStartTime',
    'messageEndTime',
    'chunkStartOffset',
    'chunkLength',
    'messageIndexOffsets',
    'messageIndexLength',
    'compression',
    'compressedSize',
    'uncompressedSize',
  ],
  Attachment: ['logTime', 'createTime', 'name', 'mediaType', 'data'],
  AttachmentIndex: ['offset', 'length', 'logTime', 'createTime', 'dataSize', 'name', 'mediaType'],
  Statistics: [
    'messageCount',
    'schemaCount',
    'channelCount',
    'attachmentCount',
    'metadataCount',
    'chunkCount',
    'messageStartTime',
    'messageEndTime',
    'channelMessageCounts',
  ],
  Metadata: ['name', 'metadata'],
  MetadataIndex: ['offset', 'length', 'name'],
  SummaryOffset: ['groupOpcode', 'groupStart', 'groupLength'],
  DataEnd: ['dataSectionCrc'],
};

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function jsonValue(v: unknown): JsonValue {
  if (v instanceof Uint8Array) return Array.from(v, String);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), String(x)]));
  return String(v);
}

/** Our record in the corpus' JSON shape, fields sorted by name. */
function toJson(record: McapRecord): JsonRecord {
  const names = FIELDS[record.type];
  assert.ok(names, `no field list for ${record.type}`);
  const r = record as unknown as Record<string, unknown>;
  const fields = names.map((n): [string, JsonValue] => [snake(n), jsonValue(r[n])]);
  return { type: record.type, fields: fields.sort((a, b) => (a[0] < b[0] ? -1 : 1)) };
}

function normalise(j: JsonRecord): JsonRecord {
  return { type: j.type, fields: [...j.fields].sort((a, b) => (a[0] < b[0] ? -1 : 1)) };
}

describe('MCAP conformance corpus', () => {
  let codecs: Codecs;
  before(async () => {
    codecs = await loadCodecs();
  });
  const corpus = loadCorpus();
  const files = corpus.map((c) => c.path);
  const bytesOf = new Map(corpus.map((c) => [c.path, c.bytes]));
  const twinOf = new Map(corpus.map((c) => [c.path, c.records.map(normalise)]));

  test("the corpus is there, every file verified against upstream's SHA-256", () => {
    assert.ok(files.length >= 200, `found ${files.length} files`);
  });

  test('streamed: every record of every file, in order', () => {
    for (const path of files) {
      const expected = twinOf.get(path)!;
      const got: JsonRecord[] = [];
      for (const r of streamRecords(new MemoryReadable(bytesOf.get(path)!, path), { codecs })) {
        if (r.type !== 'Chunk' && r.type !== 'MessageIndex') got.push(toJson(r));
      }
      assert.deepEqual(got, expected, path);
    }
  });

  test('record API: schemas, channels, statistics and messages of every file', () => {
    const modes = new Map<string, number>();
    for (const path of files) {
      const expected = twinOf.get(path)!;
      const want = (type: string) => {
        const seen = new Set<string>();
        return expected
          .filter((r) => r.type === type)
          .filter((r) => {
            const key = JSON.stringify(r);
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
      };
      const reader = McapFileReader.open(new MemoryReadable(bytesOf.get(path)!, path), { codecs });
      modes.set(reader.mode, (modes.get(reader.mode) ?? 0) + 1);
      assert.equal(reader.header.profile, '', path);
      assert.deepEqual([...reader.schemas.values()].map(toJson), want('Schema'), `${path}: schemas`);
      assert.deepEqual([...reader.channels.values()].map(toJson), want('Channel'), `${path}: channels`);
      const stats = want('Statistics');
      assert.deepEqual(reader.fileStatistics ? [toJson(reader.fileStatistics)] : [], stats, `${path}: statistics`);
      const messages = [...reader.messages()].map(toJson);
      assert.deepEqual(
        messages,
        expected.filter((r) => r.type === 'Message'),
        `${path}: messages`,
      );
      assert.equal(reader.statistics.messageCount, BigInt(messages.length), `${path}: message count`);
      assert.deepEqual(reader.metadata().map(toJson), want('Metadata'), `${path}: metadata`);
      reader.close();
    }
    // Both ways in are exercised: straight from the summary, and by scanning files whose summary lacks something.
    assert.ok((modes.get('indexed') ?? 0) > 0 && (modes.get('scanned') ?? 0) > 0, JSON.stringify([...modes]));
  });

  test('time windows and channel filters over indexed files', () => {
    for (const path of files.filter((f) => /TenMessages-ch-chx-mx-.*st/.test(f))) {
      const reader = McapFileReader.open(new MemoryReadable(bytesOf.get(path)!, path), { codecs });
      const all = [...reader.messages()].map((m) => m.logTime);
      const window = [...reader.messages({ startTime: 2n, endTime: 5n })].map((m) => m.logTime);
      assert.deepEqual(
        window,
        all.filter((t) => t >= 2n && t <= 5n),
        path,
      );
      assert.equal([...reader.messages({ channelIds: [999] })].length, 0, path);
      assert.equal([...reader.messages({ channelIds: [1] })].length, all.length, path);
      reader.close();
    }
  });
});
