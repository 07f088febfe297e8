import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { concatBytes } from './bytes.js';

describe('concatBytes', () => {
  test('joins the pieces in order', () => {
    const pieces = [Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)];
    assert.deepEqual(concatBytes(pieces, 3), Uint8Array.of(1, 2, 3));
  });

  test('no pieces are an empty array, one piece is returned without a copy', () => {
    assert.equal(concatBytes([], 0).byteLength, 0);
    const one = Uint8Array.of(7);
    assert.equal(concatBytes([one], 1), one);
  });
});
