import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { foxgloveChannels } from './foxglove-channels.js';
import { PayloadDecoder } from './payload-decoder.js';

const hex = (text: string) => Uint8Array.from(text.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
const decoder = new PayloadDecoder({ urls: [{ url: '/c', encoding: 'cbor' }] });
const frame = (data: Uint8Array) => ({ url: '/c', serType: '', actionType: 0, schemaType: SchemaType.Unknown, data });

describe('CBOR payloads (MCAP message encoding cbor)', () => {
  // Encoded examples from RFC 8949, Appendix A, and their values as the decoder shows them.
  const examples: Array<[string, unknown]> = [
    ['a26161016162820203', { a: 1, b: [2, 3] }],
    ['a201020304', { 1: 2, 3: 4 }], // integer keys as text, as JavaScript and JSON objects have them
    ['1bffffffffffffffff', '18446744073709551615'], // past 2^53: decimal text, as every 64-bit integer here
    ['3bffffffffffffffff', '-18446744073709551616'],
    ['4401020304', [1, 2, 3, 4]], // a byte string: its bytes
    ['9f018202039f0405ffff', [1, [2, 3], [4, 5]]], // indefinite-length arrays and maps
    ['bf61610161629f0203ffff', { a: 1, b: [2, 3] }],
    ['f7', null], // undefined
    ['f93c00', 1],
    ['fb3ff199999999999a', 1.1],
    ['c074323031332d30332d32315432303a30343a30305a', { tag: 0, value: '2013-03-21T20:04:00Z' }],
    ['d82076687474703a2f2f7777772e6578616d706c652e636f6d', { tag: 32, value: 'http://www.example.com' }],
    ['a1a161610102', { '{"a":1}': 2 }], // a map key that is itself a map: its JSON
    ['62c3bc', 'ü'],
    // Indefinite-length strings (RFC 8949 §3.2.3), which cborg refuses: their chunks joined.
    ['5f42010243030405ff', [1, 2, 3, 4, 5]],
    ['7f657374726561646d696e67ff', 'streaming'],
    ['7fff', ''],
    ['82d8207f626874ffbf7f616bff5f41014102ffff', [{ tag: 32, value: 'ht' }, { k: [1, 2] }]], // inside a tag, a map key
  ];
  for (const [bytes, value] of examples) {
    test(`${bytes}`, () => {
      const decoded = decoder.decode(frame(hex(bytes)));
      assert.equal(decoded.kind, 'cbor');
      assert.deepEqual(JSON.parse(JSON.stringify((decoded as { value: unknown }).value)), value);
    });
  }

  test('a long indefinite-length text string is joined (a 4-byte length head)', () => {
    const chunk = (n: number, byte: number) => [0x79, n >> 8, n & 0xff, ...new Array<number>(n).fill(byte)];
    const bytes = Uint8Array.from([0x7f, ...chunk(40_000, 0x61), ...chunk(30_000, 0x62), 0xff]);
    const decoded = decoder.decode(frame(bytes)) as { kind: string; value: string };
    assert.equal(decoded.kind, 'cbor');
    assert.equal(decoded.value, 'a'.repeat(40_000) + 'b'.repeat(30_000));
  });

  test('a map key named __proto__ stays a key', () => {
    const decoded = decoder.decode(frame(hex('a1695f5f70726f746f5f5f01'))) as { kind: string; value: object };
    assert.equal(decoded.kind, 'cbor');
    assert.deepEqual(Object.keys(decoded.value), ['__proto__']);
    assert.equal(Object.getPrototypeOf(decoded.value), Object.prototype);
  });

  test('bytes that are not one CBOR item stay bytes with a typed reason, and decode never throws', () => {
    const cases: Array<[string, string, string]> = [
      ['a26161', 'CORRUPT_DATA', 'a map cut short'],
      ['0101', 'CORRUPT_DATA', 'two items: bytes after the first'],
      ['5bffffffffffffffff00', 'CORRUPT_DATA', 'a byte string claiming 2^64 bytes'],
      ['9bffffffffffffffff', 'CORRUPT_DATA', 'an array claiming 2^64 items'],
      ['', 'CORRUPT_DATA', 'nothing'],
      ['5f4101', 'CORRUPT_DATA', 'an indefinite-length byte string without its break'],
      ['5f6161ff', 'CORRUPT_DATA', 'a text chunk in an indefinite-length byte string'],
      ['5f5f4101ffff', 'CORRUPT_DATA', 'an indefinite-length chunk in an indefinite-length byte string'],
      ['5f4101ff00', 'CORRUPT_DATA', 'an indefinite-length byte string with bytes after it'],
      [`${'81'.repeat(300)}00`, 'LIMIT_REACHED', 'nested deeper than the limit'],
      [`${'81'.repeat(200_000)}00`, 'LIMIT_REACHED', 'nested deeper than the stack'],
    ];
    for (const [bytes, code, what] of cases) {
      const decoded = decoder.decode(frame(hex(bytes)));
      assert.equal(decoded.kind, 'hex', what);
      assert.equal((decoded as { error?: { code: string } }).error?.code, code, what);
      assert.throws(() => decoder.decodeOrThrow(frame(hex(bytes))), { code }, what);
    }
  });

  test('advertised to Foxglove as its schemaless cbor encoding', () => {
    assert.deepEqual(foxgloveChannels([{ url: '/c', ser: '', schemaType: SchemaType.Unknown, encoding: 'cbor' }], []), [
      { topic: '/c', encoding: 'cbor', schemaName: '', schema: '' },
    ]);
  });
});
