import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { loadCodecs, type Codecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { ByteWriter } from './byte-writer.js';
import { ChunkLoader, chunkRecordLength } from './chunk-loader.js';
import { Opcode } from './constants.js';
import { crc32 } from './crc32.js';

// The chunk loader on hand-built chunk records: each refusal (code, message, file and offset) at the edge where it
// starts, and what comes back when a chunk is good. Mutation testing found these unpinned: whole-file tests reach
// the loader only with well-formed chunks.
const real = await loadCodecs();

interface ChunkFields {
  compression?: string;
  uncompressedSize: number;
  crc?: number;
  /** Declared records length when it must differ from `stored.length`. */
  recordsLength?: number;
}

function chunkRecord(stored: Uint8Array, f: ChunkFields): Uint8Array {
  const w = new ByteWriter(stored.length + 64);
  const at = w.beginRecord(Opcode.Chunk);
  w.u64(100);
  w.u64(200);
  w.u64(f.uncompressedSize);
  w.u32(f.crc ?? 0);
  w.string(f.compression ?? '');
  w.u64(f.recordsLength ?? stored.length);
  w.raw(stored);
  w.endRecord(at);
  return w.view8().slice();
}

function refused(
  fn: () => unknown,
  code: string,
  reason: string,
  offset?: number,
  file: string | undefined = 'c.vcap',
) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, code);
    assert.equal(error.reason, reason);
    assert.equal(error.file, file);
    if (offset !== undefined) assert.equal(error.offset, offset);
    return true;
  });
}

const loader = (bytes: Uint8Array, codecs: Codecs = real, validateCrcs = true, file: string | undefined = 'c.vcap') =>
  new ChunkLoader(new MemoryReadable(bytes), codecs, validateCrcs, file);

/** A codec that returns `size` pattern bytes and counts its calls. */
function fakeCodec(name: string, calls: number[] = []): Codecs {
  return {
    [name]: {
      decompress: (_data, size) => {
        calls.push(size);
        return patternBytes(size, 5);
      },
    },
  };
}

describe('ChunkLoader.load: where the chunk is', () => {
  const records = patternBytes(40, 1);
  const chunk = chunkRecord(records, { uncompressedSize: 40 });
  const file = Uint8Array.of(...chunk, 1, 2, 3, 4);

  test('a chunk inside the file loads to its records, at any offset', () => {
    const got = loader(file).load(0, chunk.length);
    assert.deepEqual(got.bytes.subarray(got.start, got.end), records);
    assert.equal(got.chunk.uncompressedSize, 40n);
    assert.equal(got.chunk.messageStartTime, 100n);
    const shifted = Uint8Array.of(9, 9, 9, ...chunk);
    const again = loader(shifted).load(3, chunk.length);
    assert.deepEqual(again.bytes, records);
    assert.equal(again.view.getUint8(39), records[39]);
  });

  test('a range outside the file, empty or negative is refused before reading', () => {
    const size = file.length;
    for (const [offset, length] of [
      [-1, 10],
      [0, 0],
      [size - 3, 4],
      [10, size - 5],
      [1, size],
    ] as const) {
      refused(
        () => loader(file).load(offset, length),
        'CORRUPT_FILE',
        `chunk of ${length} bytes lies outside the file`,
        offset,
      );
    }
  });

  test('a chunk loaded after a larger one still reads its own bytes', () => {
    const small = chunkRecord(patternBytes(10, 2), { uncompressedSize: 10 });
    const big = chunkRecord(patternBytes(300, 3), { uncompressedSize: 300 });
    const both = Uint8Array.of(...big, ...small, ...big);
    const l = loader(both);
    assert.deepEqual(l.load(0, big.length).bytes, patternBytes(300, 3));
    assert.deepEqual(l.load(big.length, small.length).bytes, patternBytes(10, 2));
    assert.deepEqual(l.load(big.length + small.length, big.length).bytes, patternBytes(300, 3));
  });

  test('something other than a chunk, or a chunk shorter than its index says, is refused', () => {
    const dataEnd = Uint8Array.of(Opcode.DataEnd, 4, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4);
    refused(() => loader(dataEnd).load(0, 13), 'CORRUPT_FILE', 'expected a chunk record', 0);
    const shifted = Uint8Array.of(0, 0, ...dataEnd);
    refused(() => loader(shifted).load(2, 13), 'CORRUPT_FILE', 'expected a chunk record', 2);
    refused(
      () => loader(file).load(0, chunk.length + 4),
      'CORRUPT_FILE',
      'chunk record length does not match its index',
      0,
    );
  });
});

describe('ChunkLoader.decode: the chunk record', () => {
  test('a chunk record that does not parse is refused at the file offset of the bad field', () => {
    // 5 bytes of something else, then a chunk whose records length (20) runs past its record.
    const chunk = chunkRecord(patternBytes(8, 1), { uncompressedSize: 8, recordsLength: 20 });
    const buf = Uint8Array.of(1, 2, 3, 4, 5, ...chunk);
    const view = new DataView(buf.buffer);
    // The records start after prefix (9) + 3 u64 + u32 + empty string (4) + u64 = 49 bytes; the chunk is at 1000.
    refused(
      () => loader(buf).decode(buf, view, 5, chunk.length, 1000),
      'CORRUPT_FILE',
      'bad chunk: chunk records (20 bytes) runs past the end of its record',
      1049,
    );
  });

  test('uncompressed: the records as stored, when the size says so', () => {
    const records = patternBytes(33, 4);
    assert.deepEqual(loader(chunkRecord(records, { uncompressedSize: 33 })).load(0, 33 + 49).bytes, records);
    const lying = chunkRecord(records, { uncompressedSize: 34 });
    refused(
      () => loader(lying).load(0, lying.length),
      'CORRUPT_FILE',
      'uncompressed chunk size does not match its records',
      0,
    );
  });

  test('the CRC of the records is checked when asked and present', () => {
    const records = patternBytes(64, 6);
    const good = chunkRecord(records, { uncompressedSize: 64, crc: crc32(records) });
    assert.deepEqual(loader(good).load(0, good.length).bytes, records);
    const bad = chunkRecord(records, { uncompressedSize: 64, crc: crc32(records) ^ 1 });
    refused(() => loader(bad).load(0, bad.length), 'CORRUPT_FILE', 'chunk CRC mismatch', 0);
    assert.deepEqual(loader(bad, real, false).load(0, bad.length).bytes, records);
    const none = chunkRecord(records, { uncompressedSize: 64, crc: 0 });
    assert.deepEqual(loader(none).load(0, none.length).bytes, records);
    const zstd = real['zstd']!.compress!(records, 1);
    const badZstd = chunkRecord(zstd, { compression: 'zstd', uncompressedSize: 64, crc: crc32(records) ^ 1 });
    refused(() => loader(badZstd).load(0, badZstd.length), 'CORRUPT_FILE', 'chunk CRC mismatch', 0);
  });
});

describe('ChunkLoader.decode: compressed chunks', () => {
  test('an unknown compression is NOT_SUPPORTED, named, with the file when the loader has one', () => {
    const chunk = chunkRecord(Uint8Array.of(1, 2, 3), { compression: 'brotli', uncompressedSize: 3 });
    refused(
      () => loader(chunk).load(0, chunk.length),
      'NOT_SUPPORTED',
      'chunk compression "brotli" is not supported',
      0,
    );
    refused(
      () => loader(chunk, real, true, undefined).load(0, chunk.length),
      'NOT_SUPPORTED',
      'chunk compression "brotli" is not supported',
      0,
      undefined,
    );
  });

  test('a claim above 1 GiB is refused outright; 1 GiB itself meets the ratio check', () => {
    const stored = real['zstd']!.compress!(patternBytes(100, 1), 1);
    const over = chunkRecord(stored, { compression: 'zstd', uncompressedSize: 2 ** 30 + 1 });
    refused(() => loader(over).load(0, over.length), 'CORRUPT_FILE', 'chunk claims 1073741825 uncompressed bytes', 0);
    const at = chunkRecord(stored, { compression: 'zstd', uncompressedSize: 2 ** 30 });
    refused(() => loader(at).load(0, at.length), 'CORRUPT_FILE', 'chunk claims an impossible zstd ratio', 0);
  });

  test('lz4 may expand 256 times its size plus 4096 bytes, other codecs 32768 times', () => {
    const stored = Uint8Array.of(7);
    const calls: number[] = [];
    const lz4 = fakeCodec('lz4', calls);
    const edge = chunkRecord(stored, { compression: 'lz4', uncompressedSize: 256 + 4096 });
    assert.deepEqual(loader(edge, lz4).load(0, edge.length).bytes, patternBytes(4352, 5));
    const past = chunkRecord(stored, { compression: 'lz4', uncompressedSize: 256 + 4097 });
    refused(() => loader(past, lz4).load(0, past.length), 'CORRUPT_FILE', 'chunk claims an impossible lz4 ratio', 0);
    const other = fakeCodec('xz', calls);
    const big = chunkRecord(stored, { compression: 'xz', uncompressedSize: 32768 + 4096 });
    assert.equal(loader(big, other).load(0, big.length).bytes.length, 36864);
    const tooBig = chunkRecord(stored, { compression: 'xz', uncompressedSize: 32768 + 4097 });
    refused(
      () => loader(tooBig, other).load(0, tooBig.length),
      'CORRUPT_FILE',
      'chunk claims an impossible xz ratio',
      0,
    );
    assert.deepEqual(calls, [4352, 36864]);
  });

  test('zstd: bytes that are not zstd frames are refused; frames without a content size are decoded', () => {
    const junk = chunkRecord(Uint8Array.of(1, 2, 3, 4, 5, 6), { compression: 'zstd', uncompressedSize: 6 });
    refused(() => loader(junk).load(0, junk.length), 'CORRUPT_FILE', 'zstd chunk is not a sequence of zstd frames', 0);
    // A hand-made frame: magic, descriptor 0 (no content size), window byte, one last raw block of 5 bytes.
    const frame = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x29, 0x00, 0x00, 10, 20, 30, 40, 50);
    const unknown = chunkRecord(frame, { compression: 'zstd', uncompressedSize: 5 });
    assert.deepEqual(loader(unknown).load(0, unknown.length).bytes, Uint8Array.of(10, 20, 30, 40, 50));
  });

  test('an empty compressed chunk never reaches the codec', () => {
    const calls: number[] = [];
    const chunk = chunkRecord(real['zstd']!.compress!(new Uint8Array(0), 1), {
      compression: 'zstd',
      uncompressedSize: 0,
    });
    const got = loader(chunk, fakeCodec('zstd', calls)).load(0, chunk.length);
    assert.equal(got.bytes.length, 0);
    assert.equal(got.end, 0);
    assert.deepEqual(calls, []);
  });

  test('a codec that throws, or returns another size, makes the chunk corrupt', () => {
    const stored = Uint8Array.of(1, 2, 3);
    const boom = new Error('boom');
    const throwing: Codecs = {
      lz4: {
        decompress: () => {
          throw boom;
        },
      },
    };
    const chunk = chunkRecord(stored, { compression: 'lz4', uncompressedSize: 4 });
    assert.throws(
      () => loader(chunk, throwing).load(0, chunk.length),
      (error: unknown) =>
        BagError.isInstance(error) &&
        error.code === 'CORRUPT_FILE' &&
        error.reason === 'lz4 chunk does not decompress' &&
        error.offset === 0 &&
        error.cause === boom,
    );
    const short: Codecs = { lz4: { decompress: () => Uint8Array.of(1, 2, 3) } };
    refused(
      () => loader(chunk, short).load(0, chunk.length),
      'CORRUPT_FILE',
      'lz4 chunk decompressed to 3 bytes, not 4',
      0,
    );
  });
});

describe('chunkRecordLength: one rule for every walk over a chunk’s records', () => {
  /** Records as they stand in a decompressed chunk: opcode, u64 content length, content. */
  function records(...list: Array<[opcode: number, content: number, lengthHigh?: number]>): Uint8Array {
    const w = new ByteWriter(256);
    for (const [opcode, content, high = 0] of list) {
      w.u8(opcode);
      w.u32(content);
      w.u32(high);
      w.raw(patternBytes(content, opcode));
    }
    return w.view8().slice();
  }
  const walk = (bytes: Uint8Array, end = bytes.length) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const lengths: number[] = [];
    for (let p = 0; p < end; ) {
      const length = chunkRecordLength(bytes, view, p, end, 'c.vcap', 4096);
      lengths.push(length);
      p += length;
    }
    return lengths;
  };

  test('whole records give their length, prefix included; other records may be empty, private opcodes too', () => {
    assert.deepEqual(
      walk(records([Opcode.Message, 22], [Opcode.Channel, 0], [0x90, 5], [Opcode.Message, 30])),
      [31, 9, 14, 39],
    );
  });

  test('a record cut inside its prefix or its content, or longer than 2^32, is refused at the chunk’s offset', () => {
    const two = records([Opcode.Message, 22], [Opcode.Message, 22]);
    refused(() => walk(two, two.length - 1), 'CORRUPT_FILE', 'chunk record runs past the chunk', 4096);
    refused(() => walk(two, 31 + 8), 'CORRUPT_FILE', 'chunk ends in the middle of a record', 4096);
    refused(() => walk(records([Opcode.Message, 22, 1])), 'CORRUPT_FILE', 'chunk record runs past the chunk', 4096);
  });

  test('a message shorter than its fixed fields is refused; any other record of that size is not', () => {
    refused(() => walk(records([Opcode.Message, 21])), 'CORRUPT_FILE', 'message record is too short', 4096);
    assert.deepEqual(walk(records([Opcode.Schema, 21])), [30]);
  });
});
