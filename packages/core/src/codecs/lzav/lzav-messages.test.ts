import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../../errors.js';
import {
  CompressionDecider,
  compressFrame,
  decompressFrame,
  FRAME_FOOTER_MAGIC,
  FRAME_HEADER_MAGIC,
  frameOriginalSize,
  isCompressionFrame,
} from '../compression-frame.js';
import { lzav } from './index.js';

// Each refusal of the decoders and of the compression frame, with the message that tells the user what was wrong
// (found unpinned by mutation testing: the damaged-input tests checked only the error code).
const LITERALS = [11, 12, 13, 14, 15, 16, 17, 18];
const CLOSING = [21, 22, 23, 24, 25, 26, 27, 28, 29];
/** Format 3, mref 5: 8 literals, one reference block, the closing 9 literals (as in lzav-references.test.ts). */
const stream = (reference: number[]) => Uint8Array.of(0x35, 0x08, ...LITERALS, ...reference, 0x09, ...CLOSING);

function refused(fn: () => unknown, code: string, message: string | RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, code);
    if (typeof message === 'string') assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

describe('lzav: what each refusal says', () => {
  test('format 3: short stream, bad mref, literals past the output or the input', () => {
    refused(
      () => lzav.decompress(Uint8Array.of(0x35, 1, 2, 3, 4, 5, 6, 7, 8, 9), 8),
      'CORRUPT_DATA',
      'lzav: stream too short',
    );
    for (const prefix of [0x30, 0x37])
      refused(
        () => lzav.decompress(Uint8Array.of(prefix, ...stream([0x91, 0x00]).subarray(1)), 22),
        'CORRUPT_DATA',
        'lzav: invalid minimum match length',
      );
    refused(() => lzav.decompress(stream([0x91, 0x00]), 5), 'CORRUPT_DATA', 'lzav: literals overrun the output');
    refused(
      () => lzav.decompress(Uint8Array.of(0x35, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 100),
      'CORRUPT_DATA',
      'lzav: literals overrun the input',
    );
  });

  test('format 3: references out of range or past the output, and a wrong total', () => {
    refused(() => lzav.decompress(stream([0x11, 0x01]), 22), 'CORRUPT_DATA', 'lzav: reference offset out of range');
    // 19 bytes from 8 back: fits 36 bytes of output, not 30 (a reference must end 8 bytes before the end).
    assert.equal(lzav.decompress(stream([0x9f, 0x00]), 36).length, 36);
    refused(() => lzav.decompress(stream([0x9f, 0x00]), 30), 'CORRUPT_DATA', 'lzav: reference overruns the output');
    refused(() => lzav.decompress(stream([0x91, 0x00]), 40), 'CORRUPT_DATA', 'lzav: decoded 22 bytes, expected 40');
  });

  test('format 2: short stream and bad mref', () => {
    refused(() => lzav.decompress(Uint8Array.of(0x25, 1, 2, 3, 4, 5, 6), 8), 'CORRUPT_DATA', 'lzav: stream too short');
    for (const prefix of [0x20, 0x27])
      refused(
        () => lzav.decompress(Uint8Array.of(prefix, 0x08, 1, 2, 3, 4, 5, 6, 7, 8), 8),
        'CORRUPT_DATA',
        'lzav: invalid minimum match length',
      );
  });

  test('arguments and empty data', () => {
    refused(
      () => lzav.decompress([1] as unknown as Uint8Array, 1),
      'INVALID_ARGUMENT',
      'lzav: data must be a Uint8Array',
    );
    refused(
      () => lzav.decompress(new Uint8Array(12), -1),
      'INVALID_ARGUMENT',
      'lzav: rawLength must be a non-negative integer, got -1',
    );
    refused(
      () => lzav.decompress(new Uint8Array(12), 2 ** 31),
      'INVALID_ARGUMENT',
      /^lzav: rawLength 2147483648 exceeds the 2 GiB/,
    );
    refused(() => lzav.decompress(new Uint8Array(0), 5), 'CORRUPT_DATA', 'lzav: empty stream for non-empty data');
    refused(() => lzav.decompress(stream([0x91, 0x00]), 0), 'CORRUPT_DATA', 'lzav: non-empty stream for empty data');
    assert.deepEqual(lzav.decompress(new Uint8Array(0), 0), new Uint8Array(0));
    refused(
      () => lzav.decompress(Uint8Array.of(0x15, ...stream([0x91, 0x00]).subarray(1)), 22),
      'CORRUPT_DATA',
      'lzav: unsupported stream format 1',
    );
  });
});

describe('compression frame: what each refusal says', () => {
  const data = new TextEncoder().encode('abcdefgh'.repeat(40));
  const frame = compressFrame(data, 3)!;

  test('every magic byte counts; a frame round-trips', () => {
    assert.deepEqual(decompressFrame(frame), data);
    assert.equal(isCompressionFrame(frame), true);
    for (const at of [0, 1, 2, 3, frame.length - 4, frame.length - 3, frame.length - 2, frame.length - 1]) {
      const bad = frame.slice();
      bad[at] ^= 0xff;
      assert.equal(isCompressionFrame(bad), false, `byte ${at}`);
      refused(() => decompressFrame(bad), 'CORRUPT_DATA', 'not a compression frame (bad length or magic)');
    }
  });

  test('sizes: too short to hold one, and claims outside 1 B .. 256 MiB', () => {
    refused(() => frameOriginalSize(new Uint8Array(7)), 'CORRUPT_DATA', 'compression frame too short (7 bytes)');
    assert.equal(frameOriginalSize(Uint8Array.of(0, 0, 0, 0, 0, 0, 1, 2)), 258);
    const claim = (size: number) =>
      Uint8Array.of(
        ...FRAME_HEADER_MAGIC,
        size >>> 24,
        (size >>> 16) & 255,
        (size >>> 8) & 255,
        size & 255,
        0x35,
        ...FRAME_FOOTER_MAGIC,
      );
    refused(() => decompressFrame(claim(0)), 'CORRUPT_DATA', 'compression frame claims 0 bytes (allowed 1..268435456)');
    refused(
      () => decompressFrame(claim(268435457)),
      'CORRUPT_DATA',
      'compression frame claims 268435457 bytes (allowed 1..268435456)',
    );
    refused(() => decompressFrame(claim(1)), 'CORRUPT_DATA', 'lzav: stream too short');
    // 256 MiB itself is allowed: the claim passes and the 1-byte body is what is refused.
    refused(() => decompressFrame(claim(268435456)), 'CORRUPT_DATA', 'lzav: stream too short');
  });

  test('decider options: startSize 0 is allowed, a negative or fractional one and a non-number level are not', () => {
    const decider = new CompressionDecider({ enabled: true, startSize: 0 });
    assert.equal(decider.startSize, 0);
    assert.equal(decider.level, 3);
    refused(
      () => new CompressionDecider({ enabled: true, startSize: -1 }),
      'INVALID_ARGUMENT',
      'compression startSize must be a non-negative integer, got -1',
    );
    refused(
      () => new CompressionDecider({ enabled: true, startSize: 2.5 }),
      'INVALID_ARGUMENT',
      'compression startSize must be a non-negative integer, got 2.5',
    );
    refused(
      () => new CompressionDecider({ enabled: true, level: '4' as unknown as number }),
      'INVALID_ARGUMENT',
      'compression level must be a number, got 4',
    );
    refused(
      () => new CompressionDecider({ enabled: true, level: Number.NaN }),
      'INVALID_ARGUMENT',
      'compression level must be a number, got NaN',
    );
    assert.equal(new CompressionDecider({ enabled: true, level: 7 }).level, 7);
  });
});
