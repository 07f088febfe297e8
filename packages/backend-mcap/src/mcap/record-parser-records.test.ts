import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { Opcode } from './constants.js';
import { Bytes, corruption, parse, record, viewOf } from './record-bytes.test.helper.js';
import { parseRecord } from './record-parser.js';

// parseRecord on hand-built records of every opcode: the fields it reads and every refusal with the field it names
// and where (split from record-parser.test.ts, which covers FieldReader, recordLengthAt and hasMagic).

describe('parseRecord', () => {
  test('a truncated record is refused where it starts', () => {
    const rec = record(Opcode.DataEnd, new Bytes().u32(1));
    const b = Uint8Array.of(1, 2, ...rec.subarray(0, 11));
    corruption(() => parse(b, 2), 'record is truncated', 2);
  });

  test('header, schema, channel and metadata records: every field', () => {
    const header = parse(record(Opcode.Header, new Bytes().str('ros2').str('vlink 1')));
    assert.deepEqual(header, { record: { type: 'Header', profile: 'ros2', library: 'vlink 1' }, length: 28 });
    const schema = parse(record(Opcode.Schema, new Bytes().u16(2).str('pkg/Msg').str('ros2msg').u32(3).raw([7, 8, 9])));
    assert.deepEqual(schema.record, {
      type: 'Schema',
      id: 2,
      name: 'pkg/Msg',
      encoding: 'ros2msg',
      data: Uint8Array.of(7, 8, 9),
    });
    const meta = new Bytes().str('k').str('v');
    const channel = parse(
      record(Opcode.Channel, new Bytes().u16(5).u16(2).str('/a').str('cdr').u32(meta.length).raw(meta.out)),
    );
    assert.deepEqual(channel.record, {
      type: 'Channel',
      id: 5,
      schemaId: 2,
      topic: '/a',
      messageEncoding: 'cdr',
      metadata: new Map([['k', 'v']]),
    });
    const metadata = parse(record(Opcode.Metadata, new Bytes().str('calib').u32(meta.length).raw(meta.out)));
    assert.deepEqual(metadata.record, { type: 'Metadata', name: 'calib', metadata: new Map([['k', 'v']]) });
    const index = parse(record(Opcode.MetadataIndex, new Bytes().u64(100).u64(30).str('calib')));
    assert.deepEqual(index.record, { type: 'MetadataIndex', offset: 100n, length: 30n, name: 'calib' });
  });

  test('each string field cut short is named in the refusal', () => {
    const cut = (opcode: number, head: Bytes, what: string) => {
      const rec = record(opcode, head.u32(40).u8(0x61));
      corruption(() => parse(rec), `${what} (40 bytes) runs past the end of its record`);
    };
    cut(Opcode.Header, new Bytes(), 'profile');
    cut(Opcode.Header, new Bytes().str('p'), 'library');
    cut(Opcode.Schema, new Bytes().u16(1), 'schema name');
    cut(Opcode.Schema, new Bytes().u16(1).str('n'), 'schema encoding');
    cut(Opcode.Schema, new Bytes().u16(1).str('n').str('e'), 'schema data');
    cut(Opcode.Channel, new Bytes().u16(1).u16(1), 'topic');
    cut(Opcode.Channel, new Bytes().u16(1).u16(1).str('/t'), 'message encoding');
    cut(Opcode.Channel, new Bytes().u16(1).u16(1).str('/t').str('cdr'), 'channel metadata');
    cut(Opcode.Chunk, new Bytes().u64(0).u64(0).u64(0).u32(0), 'compression');
    cut(Opcode.Attachment, new Bytes().u64(0).u64(0), 'attachment name');
    cut(Opcode.Attachment, new Bytes().u64(0).u64(0).str('n'), 'media type');
    cut(Opcode.AttachmentIndex, new Bytes().u64(0).u64(0).u64(0).u64(0).u64(0), 'attachment name');
    cut(Opcode.AttachmentIndex, new Bytes().u64(0).u64(0).u64(0).u64(0).u64(0).str('n'), 'media type');
    cut(Opcode.Metadata, new Bytes(), 'metadata name');
    cut(Opcode.Metadata, new Bytes().str('n'), 'metadata');
    cut(Opcode.MetadataIndex, new Bytes().u64(0).u64(0), 'metadata name');
    const chunkIndexHead = new Bytes().u64(0).u64(0).u64(0).u64(0);
    cut(Opcode.ChunkIndex, chunkIndexHead, 'message index offsets');
    cut(Opcode.ChunkIndex, new Bytes().u64(0).u64(0).u64(0).u64(0).u32(0).u64(0), 'compression');
    cut(
      Opcode.Statistics,
      new Bytes().u64(0).u16(0).u32(0).u32(0).u32(0).u32(0).u64(0).u64(0),
      'channel message counts',
    );
  });

  test('a message needs its 22 fixed bytes; with exactly those its payload is empty', () => {
    const fixed = new Bytes().u16(3).u32(9).u64(1000).u64(999);
    assert.deepEqual(parse(record(Opcode.Message, fixed)).record, {
      type: 'Message',
      channelId: 3,
      sequence: 9,
      logTime: 1000n,
      publishTime: 999n,
      data: new Uint8Array(0),
    });
    const withData = parse(record(Opcode.Message, new Bytes().raw(fixed.out).raw([1, 2, 3])));
    assert.deepEqual((withData.record as { data: Uint8Array }).data, Uint8Array.of(1, 2, 3));
    corruption(() => parse(record(Opcode.Message, fixed.out.slice(0, 21))), 'message record is too short', 9);
  });

  test('chunk records: fields, where the records start, and a records length past the record or above 2^53', () => {
    const chunk = record(
      Opcode.Chunk,
      new Bytes().u64(10).u64(20).u64(3).u32(0xdeadbeef).str('').u64(3).raw([4, 5, 6]).u8(0),
    );
    assert.deepEqual(parse(chunk), {
      record: {
        type: 'Chunk',
        messageStartTime: 10n,
        messageEndTime: 20n,
        uncompressedSize: 3n,
        uncompressedCrc: 0xdeadbeef,
        compression: '',
        recordsOffset: 49,
        recordsLength: 3,
      },
      length: 53,
    });
    const head = () => new Bytes().u64(0).u64(0).u64(0).u32(0).str('zstd');
    corruption(
      () => parse(record(Opcode.Chunk, head().u64(10).raw([1, 2]))),
      'chunk records (10 bytes) runs past the end of its record',
    );
    corruption(() => parse(record(Opcode.Chunk, head().u64(1n << 60n))), 'chunk records length is implausibly large');
    corruption(
      () => parse(record(Opcode.Chunk, head().u32(2))),
      'chunk records length (8 bytes) runs past the end of its record',
    );
  });

  test('message indexes: entries of 16 bytes that must fit the record', () => {
    const ok = parse(record(Opcode.MessageIndex, new Bytes().u16(4).u32(32).u64(1).u64(100).u64(2).u64(200)));
    assert.deepEqual(ok.record, {
      type: 'MessageIndex',
      channelId: 4,
      records: [
        [1n, 100n],
        [2n, 200n],
      ],
    });
    corruption(
      () => parse(record(Opcode.MessageIndex, new Bytes().u16(4).u32(24).u64(1).u64(100).u64(2))),
      'message index length 24 is not a multiple of 16',
    );
    corruption(
      () => parse(record(Opcode.MessageIndex, new Bytes().u16(4).u32(32).u64(1).u64(100))),
      'message index runs past its record',
    );
  });

  test('chunk index, attachment, statistics and the small records: every field', () => {
    const offsets = new Bytes().u16(1).u64(500);
    const chunkIndex = parse(
      record(
        Opcode.ChunkIndex,
        new Bytes().u64(1).u64(2).u64(3).u64(4).u32(offsets.length).raw(offsets.out).u64(5).str('lz4').u64(6).u64(7),
      ),
    );
    assert.deepEqual(chunkIndex.record, {
      type: 'ChunkIndex',
      messageStartTime: 1n,
      messageEndTime: 2n,
      chunkStartOffset: 3n,
      chunkLength: 4n,
      messageIndexOffsets: new Map([[1, 500n]]),
      messageIndexLength: 5n,
      compression: 'lz4',
      compressedSize: 6n,
      uncompressedSize: 7n,
    });
    const attachment = parse(
      record(Opcode.Attachment, new Bytes().u64(1).u64(2).str('cal.yaml').str('text/yaml').u64(2).raw([8, 9]).u32(77)),
    );
    assert.deepEqual(attachment.record, {
      type: 'Attachment',
      logTime: 1n,
      createTime: 2n,
      name: 'cal.yaml',
      mediaType: 'text/yaml',
      data: Uint8Array.of(8, 9),
      crc: 77,
    });
    corruption(
      () => parse(record(Opcode.Attachment, new Bytes().u64(1).u64(2).str('a').str('b').u64(9).raw([1]))),
      'attachment data (9 bytes) runs past the end of its record',
    );
    corruption(
      () =>
        parse(
          record(
            Opcode.Attachment,
            new Bytes()
              .u64(1)
              .u64(2)
              .str('a')
              .str('b')
              .u64(1n << 62n),
          ),
        ),
      'attachment size is implausibly large',
    );
    const counts = new Bytes().u16(2).u64(11);
    const stats = parse(
      record(
        Opcode.Statistics,
        new Bytes().u64(11).u16(1).u32(2).u32(3).u32(4).u32(5).u64(6).u64(7).u32(counts.length).raw(counts.out),
      ),
    );
    assert.deepEqual(stats.record, {
      type: 'Statistics',
      messageCount: 11n,
      schemaCount: 1,
      channelCount: 2,
      attachmentCount: 3,
      metadataCount: 4,
      chunkCount: 5,
      messageStartTime: 6n,
      messageEndTime: 7n,
      channelMessageCounts: new Map([[2, 11n]]),
    });
    assert.deepEqual(
      parse(record(Opcode.AttachmentIndex, new Bytes().u64(1).u64(2).u64(3).u64(4).u64(5).str('n').str('m'))).record,
      {
        type: 'AttachmentIndex',
        offset: 1n,
        length: 2n,
        logTime: 3n,
        createTime: 4n,
        dataSize: 5n,
        name: 'n',
        mediaType: 'm',
      },
    );
    assert.deepEqual(parse(record(Opcode.Footer, new Bytes().u64(1).u64(2).u32(3))).record, {
      type: 'Footer',
      summaryStart: 1n,
      summaryOffsetStart: 2n,
      summaryCrc: 3,
    });
    assert.deepEqual(parse(record(Opcode.SummaryOffset, new Bytes().u8(4).u64(5).u64(6))).record, {
      type: 'SummaryOffset',
      groupOpcode: 4,
      groupStart: 5n,
      groupLength: 6n,
    });
    assert.deepEqual(parse(record(Opcode.DataEnd, new Bytes().u32(9).u8(0))), {
      record: { type: 'DataEnd', dataSectionCrc: 9 },
      length: 14,
    });
  });

  test('an unknown opcode keeps its whole body', () => {
    const b = Uint8Array.of(0xaa, ...record(0x80, [1, 2, 3, 4]), 0xbb);
    assert.deepEqual(parseRecord(b, viewOf(b), 1, b.length - 1), {
      record: { type: 'Unknown', opcode: 0x80, data: Uint8Array.of(1, 2, 3, 4) },
      length: 13,
    });
  });
});
