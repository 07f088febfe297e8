import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { MAGIC, Opcode } from './constants.js';
import { FieldReader, RecordCorruption, hasMagic, parseRecord, recordLengthAt } from './record-parser.js';

// The MCAP record parser on hand-built bytes (written here field by field, not by our encoder): every field it
// reads, every refusal with the field it names and where, and the edges of each length check. Mutation testing
// found these unpinned: the reader tests go through whole files, where a wrong label or an off-by-one in a bound
// rarely shows.

/** Little-endian field builder. */
class Bytes {
  readonly out: number[] = [];
  u8(v: number): this {
    this.out.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    return this.u8(v).u8(v >>> 8);
  }
  u32(v: number): this {
    return this.u16(v & 0xffff).u16(v >>> 16);
  }
  u64(v: number | bigint): this {
    const b = BigInt(v);
    return this.u32(Number(b & 0xffffffffn)).u32(Number(b >> 32n));
  }
  str(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).raw(b);
  }
  raw(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.out.push(b[i]!);
    return this;
  }
  get length(): number {
    return this.out.length;
  }
}

/** A whole record: opcode, u64 content length, content. */
function record(opcode: number, body: Bytes | number[]): Uint8Array {
  const content = body instanceof Bytes ? body.out : body;
  return Uint8Array.from(new Bytes().u8(opcode).u64(content.length).raw(content).out);
}

const viewOf = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
const parse = (b: Uint8Array, offset = 0) => parseRecord(b, viewOf(b), offset, b.length);
const reader = (body: Bytes) => {
  const b = Uint8Array.from(body.out);
  return new FieldReader(b, viewOf(b), 0, b.length);
};

/** Expects a RecordCorruption with exactly this message and position. */
function corruption(fn: () => unknown, message: string, at?: number): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RecordCorruption, String(error));
    assert.equal(error.name, 'RecordCorruption');
    assert.equal(error.message, message);
    if (at !== undefined) assert.equal(error.at, at);
    return true;
  });
}

describe('FieldReader', () => {
  test('reads each width little-endian and refuses a read one byte past the end, naming it', () => {
    const r = reader(new Bytes().u8(7).u16(0x1234).u32(0x89abcdef).u64(0x0102030405060708n));
    assert.equal(r.u8(), 7);
    assert.equal(r.u16(), 0x1234);
    assert.equal(r.u32(), 0x89abcdef);
    assert.equal(r.u64(), 0x0102030405060708n);
    assert.equal(r.pos, 15);
    corruption(() => r.u8(), 'u8 (1 bytes) runs past the end of its record', 15);
    const short = reader(new Bytes().u32(1).u16(2).u8(3));
    corruption(() => short.u64(), 'u64 (8 bytes) runs past the end of its record', 0);
    short.u32();
    corruption(() => short.u32(), 'u32 (4 bytes) runs past the end of its record', 4);
    assert.equal(short.u16(), 2);
    corruption(() => short.u16(), 'u16 (2 bytes) runs past the end of its record', 6);
    assert.deepEqual([...short.bytesView(1, 'last')], [3]);
    assert.deepEqual([...short.bytesView(0, 'none')], []);
    corruption(() => short.bytesView(-1, 'negative'), 'negative (-1 bytes) runs past the end of its record', 7);
  });

  test('a reader that starts inside the buffer counts from there and stops at its end, not the buffer’s', () => {
    const b = Uint8Array.of(9, 9, 1, 0, 0, 0, 2, 0, 0, 0, 9, 9);
    const r = new FieldReader(b, viewOf(b), 2, 8);
    assert.equal(r.u32(), 1);
    corruption(() => r.u32(), 'u32 (4 bytes) runs past the end of its record', 6);
    assert.deepEqual([...r.bytesView(2, 'rest')], [2, 0]);
  });

  test('u64n: a u64 length up to 2^53 - 1 as a number; above that it is corruption', () => {
    for (const value of [0n, 7n, (1n << 32n) + 7n, (0x1fffffn << 32n) | 0xffffffffn]) {
      const r = reader(new Bytes().u64(value));
      assert.equal(r.u64n('size'), Number(value));
      assert.equal(r.pos, 8);
    }
    const big = reader(new Bytes().u64(0x20000000000000n));
    corruption(() => big.u64n('attachment size'), 'attachment size is implausibly large', 0);
    corruption(
      () => reader(new Bytes().u32(5)).u64n('records length'),
      'records length (8 bytes) runs past the end of its record',
    );
  });

  test('strings: empty, UTF-8, and a length past the end (named, "string" by default)', () => {
    const r = reader(new Bytes().str('').str('päth/ü').u32(5).raw([0x61, 0x62]));
    assert.equal(r.string(), '');
    assert.equal(r.string('topic'), 'päth/ü');
    corruption(() => r.string(), 'string (5 bytes) runs past the end of its record', 20);
    const named = reader(new Bytes().u32(3).raw([0x61]));
    corruption(() => named.string('schema name'), 'schema name (3 bytes) runs past the end of its record', 4);
  });

  test('string maps: pairs in order, a duplicate key, a key or value cut short', () => {
    const pairs = new Bytes().str('a').str('1').str('b').str('');
    const r = reader(new Bytes().u32(pairs.length).raw(pairs.out).u8(0xee));
    assert.deepEqual(
      [...r.stringMap('metadata')],
      [
        ['a', '1'],
        ['b', ''],
      ],
    );
    assert.equal(r.u8(), 0xee);
    const dup = new Bytes().str('k').str('1').str('k').str('2');
    corruption(
      () => reader(new Bytes().u32(dup.length).raw(dup.out)).stringMap('metadata'),
      'metadata: duplicate key "k"',
      24,
    );
    const cutKey = new Bytes().u32(9).raw([0x61]);
    corruption(
      () => reader(new Bytes().u32(cutKey.length).raw(cutKey.out)).stringMap('channel metadata'),
      'channel metadata key (9 bytes) runs past the end of its record',
    );
    const cutValue = new Bytes().str('k').u32(9);
    corruption(
      () => reader(new Bytes().u32(cutValue.length).raw(cutValue.out)).stringMap('metadata'),
      'metadata value (9 bytes) runs past the end of its record',
    );
    corruption(
      () => reader(new Bytes().u32(50).str('k')).stringMap('metadata'),
      'metadata (50 bytes) runs past the end of its record',
      4,
    );
  });

  test('id maps: u16 → u64 entries of 10 bytes, a duplicate id, a length that is not a multiple of 10', () => {
    const entries = new Bytes()
      .u16(3)
      .u64(30)
      .u16(1)
      .u64(10n << 40n);
    const r = reader(new Bytes().u32(entries.length).raw(entries.out).u8(0xee));
    assert.deepEqual(
      [...r.idMap('counts')],
      [
        [3, 30n],
        [1, 10n << 40n],
      ],
    );
    assert.equal(r.u8(), 0xee);
    const dup = new Bytes().u16(4).u64(1).u16(4).u64(2);
    corruption(() => reader(new Bytes().u32(dup.length).raw(dup.out)).idMap('counts'), 'counts: duplicate id 4', 24);
    corruption(
      () => reader(new Bytes().u32(12).u16(1).u64(1).u16(2)).idMap('message index offsets'),
      'message index offsets: length 12 is not a multiple of 10',
      4,
    );
  });
});

describe('recordLengthAt', () => {
  test('the total length of a whole record, -1 for fewer than its bytes, wherever it starts', () => {
    const rec = record(Opcode.DataEnd, new Bytes().u32(0xabcdef));
    const b = Uint8Array.of(0, 0, 0, 0, ...rec, 0xff);
    assert.equal(recordLengthAt(viewOf(b), 4, b.length), 13);
    assert.equal(recordLengthAt(viewOf(b), 4, 17), 13);
    assert.equal(recordLengthAt(viewOf(b), 4, 16), -1);
    // Fewer than the 9 prefix bytes: -1 without reading the length (here 0xff bytes that would be implausible).
    const prefixOnly = Uint8Array.of(5, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0);
    assert.equal(recordLengthAt(viewOf(prefixOnly), 0, 8), -1);
    const shiftedPrefix = Uint8Array.of(0, 0, 0, 0, ...prefixOnly);
    assert.equal(recordLengthAt(viewOf(shiftedPrefix), 4, 12), -1);
  });

  test('a length above 2^53 is corruption; up to it, a long claim is only a truncated record', () => {
    const claim = (hi: number, lo: number) => Uint8Array.from(new Bytes().u8(5).u32(lo).u32(hi).u8(1).u8(2).u8(3).out);
    assert.equal(recordLengthAt(viewOf(claim(1, 2)), 0, 12), -1);
    assert.equal(recordLengthAt(viewOf(claim(0x1fffff, 3)), 0, 12), -1);
    corruption(() => recordLengthAt(viewOf(claim(0x200000, 3)), 0, 12), 'record length is implausibly large', 0);
    assert.equal(recordLengthAt(viewOf(claim(0, 3)), 0, 12), 12);
  });
});

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

describe('hasMagic', () => {
  test('true only for all 8 magic bytes at the offset, inside the buffer', () => {
    const b = Uint8Array.of(0, ...MAGIC, 0);
    assert.equal(hasMagic(b, 1, MAGIC), true);
    assert.equal(hasMagic(b, 0, MAGIC), false);
    assert.equal(hasMagic(b, 2, MAGIC), false);
    assert.equal(hasMagic(b, -1, MAGIC), false);
    assert.equal(hasMagic(b.subarray(0, 8), 1, MAGIC), false);
    for (let i = 0; i < MAGIC.length; i++) {
      const bad = b.slice();
      bad[1 + i] ^= 0x10;
      assert.equal(hasMagic(bad, 1, MAGIC), false, `byte ${i}`);
    }
  });
});
