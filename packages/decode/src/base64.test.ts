import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { toBase64, toBase64Portable } from './base64.js';

describe('base64', () => {
  test('every path gives btoa’s standard alphabet and padding', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      const want = btoa(String.fromCharCode(...bytes));
      assert.equal(toBase64(bytes), want);
      assert.equal(toBase64Portable(bytes), want);
    }
    assert.equal(toBase64(new Uint8Array([0xff, 0xfe])), '//4=');
  });

  test('a view into a larger buffer encodes only its own bytes, also past 64 KiB', () => {
    const backing = Uint8Array.from({ length: 70_010 }, (_, i) => (i * 7) & 0xff);
    const view = backing.subarray(5, 70_005);
    const want = btoa(Array.from(view, (b) => String.fromCharCode(b)).join(''));
    assert.equal(toBase64(view), want);
    assert.equal(toBase64Portable(view), want);
  });
});
