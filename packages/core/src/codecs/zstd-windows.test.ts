import assert from 'node:assert/strict';
import { describe, it } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { checkZstdWindows, MAX_ZSTD_WINDOW } from './zstd-windows.js';

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/** A frame with a window descriptor byte and one last raw block of `payload` (RFC 8878 §3.1.1). */
function frame(windowByte: number, payload: number[], checksum = false): number[] {
  const block = ((payload.length << 3) | 1) >>> 0; // last block, raw
  return [
    ...MAGIC,
    checksum ? 0x04 : 0x00,
    windowByte,
    block & 0xff,
    (block >> 8) & 0xff,
    (block >> 16) & 0xff,
    ...payload,
    ...(checksum ? [0, 0, 0, 0] : []),
  ];
}

const source = (bytes: number[]) => {
  const data = new Uint8Array(bytes);
  return [(offset: number, length: number) => data.subarray(offset, offset + length), data.length] as const;
};

const refused = (e: unknown) => BagError.isInstance(e) && e.code === 'LIMIT_REACHED' && /window/.test(e.message);

describe('checkZstdWindows', () => {
  it('passes frames whose windows zstd itself decodes, one after another and after a skippable frame', () => {
    // 0x48: 2^(10 + 9) = 512 KiB; 0x88: 2^27 exactly (the limit).
    const skippable = [0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3];
    checkZstdWindows(...source([...frame(0x48, [1, 2, 3]), ...skippable, ...frame(0x88, [4], true)]));
  });

  it('refuses a frame header that asks for more (an 8-byte file asked for 480 MiB, found by fuzzing)', () => {
    assert.throws(() => checkZstdWindows(...source([...MAGIC, 0x00, 0x97, 0x15, 0xf9])), refused);
    assert.throws(() => checkZstdWindows(...source(frame(0x89, [1]))), refused);
  });

  it('refuses a later frame too: the walk follows the block headers from frame to frame', () => {
    assert.throws(() => checkZstdWindows(...source([...frame(0x48, [1, 2]), ...frame(0xf8, [3])])), refused);
  });

  it('reads the window of a single-segment frame from its content size', () => {
    // Single segment (0x20) with an 8-byte content size (0xc0): 2^31 bytes.
    const big = [...MAGIC, 0xe0, 0, 0, 0, 0x80, 0, 0, 0, 0];
    assert.throws(() => checkZstdWindows(...source(big)), refused);
    const small = [...MAGIC, 0x20, 100, 0x19, 0, 0, 7, 7, 7];
    checkZstdWindows(...source(small));
    assert.throws(() => checkZstdWindows(...source(small), 64), refused, 'against a smaller limit');
    assert.equal(MAX_ZSTD_WINDOW, 2 ** 27);
  });

  it('leaves garbage, cut frames and reserved blocks to the decoder (no error here)', () => {
    checkZstdWindows(...source([1, 2, 3, 4, 5, 6, 7, 8, 9]));
    checkZstdWindows(...source(frame(0x48, [1, 2, 3]).slice(0, 9)));
    checkZstdWindows(...source([...MAGIC, 0x00, 0x48, 0x07, 0, 0]));
  });
});
