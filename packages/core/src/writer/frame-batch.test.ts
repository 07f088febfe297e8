import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { FIELDS, F_CHUNK, F_LENGTH, F_OFFSET, type ChunkRef } from '../writer-worker/protocol.js';
import { BatchBuilder, BatchPayloads, REUSED_VIEW_MAX, SMALL_PAYLOAD } from './frame-batch.js';
import { sharedCopiesNeedAlignment } from '../runtime/shared-copies.js';
import { SlabPool } from './slab-pool.js';

/** A chunk whose byte i is (i * 31 + seed) & 0xff, so any misplaced byte shows. */
function chunk(size: number, seed: number, shared = typeof SharedArrayBuffer === 'function'): ArrayBufferLike {
  const buffer = shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return buffer;
}

const expected = (buffer: ArrayBufferLike, offset: number, length: number) =>
  Array.from(new Uint8Array(buffer, offset, length));

describe('BatchPayloads (writer worker payload views)', () => {
  test('small payloads read back byte for byte: every length 0–80 at aligned offsets, and at the chunk end', () => {
    const a = chunk(4096, 1);
    const b = chunk(4096, 2, false);
    const payloads = new BatchPayloads();
    payloads.begin([a, b]);
    for (let length = 0; length <= 80; length++) {
      for (const [index, buffer] of [a, b].entries()) {
        const view = payloads.view(index, 100 * 4, length);
        assert.equal(view.byteLength, length);
        assert.deepEqual(Array.from(view), expected(buffer, 400, length), `chunk ${index}, length ${length}`);
      }
      // Ending on the chunk's last byte (a whole-word copy would read past it when the length is not a multiple of 4).
      const atEnd = 4096 - length;
      assert.deepEqual(Array.from(payloads.view(0, atEnd, length)), expected(a, atEnd, length), `end, ${length}`);
    }
    // An aligned payload at the end of a chunk whose size is not a multiple of 4: no word past the chunk is read.
    const odd = chunk(4099, 6);
    payloads.begin([odd]);
    assert.deepEqual(Array.from(payloads.view(0, 4096, 3)), expected(odd, 4096, 3));
  });

  test('unaligned offsets, and payloads from REUSED_VIEW_MAX on in plain buffers, get views of their own', () => {
    const a = chunk(8192, 3, false);
    const payloads = new BatchPayloads();
    payloads.begin([a]);
    const unaligned = payloads.view(0, 1001, 64);
    assert.equal(unaligned.buffer, a);
    assert.deepEqual(Array.from(unaligned), expected(a, 1001, 64));
    const large = payloads.view(0, 2048, REUSED_VIEW_MAX);
    assert.equal(large.buffer, a);
    assert.equal(large.byteOffset, 2048);
    assert.deepEqual(Array.from(large), expected(a, 2048, REUSED_VIEW_MAX));
  });

  test('arena payloads from REUSED_VIEW_MAX on in shared memory are staged in a plain buffer (V8 copies)', () => {
    const arena = chunk(SMALL_PAYLOAD + 8192, 5);
    const own = chunk(SMALL_PAYLOAD + 8, 6);
    const payloads = new BatchPayloads();
    payloads.begin([arena, own]);
    for (const length of [REUSED_VIEW_MAX, 16 * 1024 + 3, SMALL_PAYLOAD]) {
      const staged = payloads.view(0, 4096, length);
      // Only where shared copies are slow (V8); Bun hands over the view itself.
      assert.equal(staged.buffer instanceof SharedArrayBuffer, !sharedCopiesNeedAlignment, `${length} B`);
      assert.deepEqual(Array.from(staged), expected(arena, 4096, length), `${length} B`);
    }
    // Unaligned, or larger than any arena payload (a slab of its own, which backends may write as it is): views.
    assert.equal(payloads.view(0, 4100, 2048).buffer, arena);
    assert.equal(payloads.view(1, 0, SMALL_PAYLOAD + 8).buffer, own);
  });

  test('a reused view holds the latest payload; a new batch reads its own chunks', () => {
    const payloads = new BatchPayloads();
    const first = chunk(4096, 4);
    payloads.begin([first]);
    const one = payloads.view(0, 0, 64);
    assert.deepEqual(Array.from(one), expected(first, 0, 64));
    const two = payloads.view(0, 64, 64);
    assert.deepEqual(Array.from(two), expected(first, 64, 64));
    // Valid until the next call: the backend must copy what it keeps (BackendWriter.write's contract).
    assert.deepEqual(Array.from(one), expected(first, 64, 64));
    const second = chunk(4096, 5);
    payloads.begin([second]);
    assert.deepEqual(Array.from(payloads.view(0, 128, 64)), expected(second, 128, 64));
  });
});

describe('BatchBuilder (the producer side of a batch)', () => {
  test('arena payloads start at multiples of 8 and read back through BatchPayloads byte for byte', () => {
    const pool = new SlabPool(1 << 24);
    const builder = new BatchBuilder(pool);
    const sent: Uint8Array[] = [];
    // Small and large payloads, each from an aligned and from a misaligned view (copied through a staging buffer
    // where shared copies are slow, in pieces of 64 KiB).
    const lengths = [...Array.from({ length: 40 }, (_, i) => i * 3 + 1), 300, 20_000, SMALL_PAYLOAD + 70_000];
    for (const [i, length] of lengths.entries()) {
      for (const skew of [0, 3]) {
        const backing = new Uint8Array(length + 8).map((_, k) => (k * 7 + i + skew) & 0xff);
        const data = backing.subarray(skew, skew + length);
        sent.push(data);
        builder.add(i, 0, 1, 0, 1, data, false, undefined);
      }
    }
    const [message] = builder.take(1);
    // Shared slabs travel by id, introduced in the batch that first uses them (as the worker learns them).
    const slabs = new Map<number, ArrayBufferLike>(message.slabs);
    const bytesOf = (ref: ChunkRef): ArrayBufferLike => (typeof ref === 'number' ? slabs.get(ref)! : ref);
    const meta = new Float64Array(bytesOf(message.meta));
    const payloads = new BatchPayloads();
    payloads.begin(message.chunks.map(bytesOf));
    for (let i = 0; i < sent.length; i++) {
      const offset = meta[i * FIELDS + F_OFFSET]!;
      assert.equal(offset % 8, 0, `frame ${i} at ${offset}`);
      assert.equal(meta[i * FIELDS + F_LENGTH], sent[i]!.length);
      const view = payloads.view(meta[i * FIELDS + F_CHUNK]!, offset, meta[i * FIELDS + F_LENGTH]!);
      assert.deepEqual(Array.from(view), Array.from(sent[i]!), `frame ${i}`);
    }
  });
});
