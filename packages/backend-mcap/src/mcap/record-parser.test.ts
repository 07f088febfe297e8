import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { MAGIC, Opcode } from './constants.js';
import { Bytes, corruption, reader, record, viewOf } from './record-bytes.test.helper.js';
import { FieldReader, hasMagic, recordLengthAt } from './record-parser.js';

// The MCAP record parser on hand-built bytes (written here field by field, not by our encoder): every field it
// reads, every refusal with the field it names and where, and the edges of each length check. Mutation testing
// found these unpinned: the reader tests go through whole files, where a wrong label or an off-by-one in a bound
// rarely shows.

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
