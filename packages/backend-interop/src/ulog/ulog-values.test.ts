import assert from 'node:assert/strict';
import { test } from '@vlink/fixtures/test';
import { decodeKeyValue, ulogText } from './ulog-values.js';

const utf8 = new TextEncoder();

/** A ULog key/value body: `uint8 key_len, "type name", value`. */
function keyValue(typeAndKey: string, value: Uint8Array): Uint8Array {
  const key = utf8.encode(typeAndKey);
  return Uint8Array.of(key.length, ...key, ...value);
}

test('a char[N] value keeps what follows a NUL, as pyulog shows it', () => {
  const kv = decodeKeyValue(keyValue('char[8] sys_name', Uint8Array.of(0x50, 0x58, 0x34, 0, 0x61, 0, 0, 0)));
  assert.deepEqual(kv, { type: 'char[8]', key: 'sys_name', value: 'PX4\u0000a\u0000\u0000\u0000' });
});

test('bytes that are not UTF-8 are left out of a char[N] value (pyulog: errors="ignore")', () => {
  assert.equal(ulogText(Uint8Array.of(0x6f, 0xff, 0x6b, 0xc3)), 'ok');
  // Two bytes of "é" and a lone continuation byte: the valid character stays.
  assert.equal(ulogText(Uint8Array.of(0xc3, 0xa9, 0x80)), 'é');
});

test('a U+FFFD the value really holds is kept', () => {
  assert.equal(ulogText(utf8.encode('a\uFFFDb')), 'a\uFFFDb');
});
