import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { readBodyInto } from './read-body-into.js';

/** 3 MiB + 7 bytes that differ at every offset: more than one read of the 1 MiB bounce buffer. */
const bytes = Uint8Array.from({ length: 3 * 1024 * 1024 + 7 }, (_, i) => (i * 2_654_435_761) >>> 24);

/** `bytes` as a body in chunks of `chunk` bytes: a byte stream (read with a BYOB reader) or a plain one. */
function body(kind: 'bytes' | 'plain', chunk = 300_000): ReadableStream<Uint8Array> {
  let at = 0;
  if (kind === 'bytes')
    return new ReadableStream({
      type: 'bytes',
      pull(controller) {
        if (at >= bytes.length) {
          controller.close();
          // A BYOB read waiting when the stream closes is answered by an empty response.
          return controller.byobRequest?.respond(0);
        }
        controller.enqueue(bytes.slice(at, at + chunk));
        at += chunk;
      },
    });
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

describe('readBodyInto', () => {
  for (const kind of ['bytes', 'plain'] as const) {
    test(`a ${kind} body arrives byte for byte, in shared memory too`, async () => {
      const into = new Uint8Array(new SharedArrayBuffer(bytes.length + 10));
      assert.equal(await readBodyInto(body(kind), into), bytes.length);
      assert.deepEqual(new Uint8Array(into.slice(0, bytes.length)), bytes);
      const plain = new Uint8Array(bytes.length);
      assert.equal(await readBodyInto(body(kind, 4 * 1024 * 1024), plain), bytes.length);
      assert.deepEqual(plain, bytes);
    });

    test(`a ${kind} body longer than asked for is an IO_ERROR`, async () => {
      await assert.rejects(
        readBodyInto(body(kind), new Uint8Array(bytes.length - 1)),
        (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && /more than/.test(e.message),
      );
    });
  }

  test('no body is no bytes', async () => {
    assert.equal(await readBodyInto(null, new Uint8Array(4)), 0);
  });
});
