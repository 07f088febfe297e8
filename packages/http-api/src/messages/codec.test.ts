import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { fromBase64, fromBase64Url, toBase64Url } from './base64.js';
import { decodeCursor, encodeCursor } from './cursor-token.js';

describe('codecs', () => {
  test('base64 decoding and the url-safe variant invert the encoding', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      const want = btoa(String.fromCharCode(...bytes));
      assert.deepEqual(fromBase64(want), bytes);
      assert.deepEqual(fromBase64Url(toBase64Url(bytes)), bytes);
    }
  });

  test('cursor tokens carry the query and position and reject tampering', () => {
    const token = encodeCursor('a.vdb', { urls: ['x'], beginUs: 5, endUs: 9 }, { t: 7, k: 2, n: 11 });
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(token, 'a.vdb'), {
      query: { urls: ['x'], beginUs: 5, endUs: 9 },
      position: { t: 7, k: 2, n: 11 },
    });
    assert.throws(() => decodeCursor(token, 'b.vdb'), /another bag/);
    assert.throws(() => decodeCursor(`${token.slice(0, -3)}!!!`, 'a.vdb'), /cursor/);
    const forged = toBase64Url(
      new TextEncoder().encode(JSON.stringify({ v: 1, id: 'a.vdb', q: {}, p: { t: 1, k: -1, n: 0 } })),
    );
    assert.throws(() => decodeCursor(forged, 'a.vdb'), /malformed/);
    // A bag may hold times before its start (a foreign or hand-made file): the position keeps them.
    const negative = encodeCursor('a.vdb', {}, { t: -5, k: 1, n: 3 });
    assert.deepEqual(decodeCursor(negative, 'a.vdb').position, { t: -5, k: 1, n: 3 });
  });
});
