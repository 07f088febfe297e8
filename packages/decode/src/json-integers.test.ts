import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { scanJson } from './depth.js';
import { PayloadDecoder } from './index.js';

const decoder = new PayloadDecoder();
const json = (text: string) =>
  decoder.decode({
    url: '/j',
    serType: 'json',
    schemaType: SchemaType.Raw,
    actionType: 0,
    data: new TextEncoder().encode(text),
  });

describe('JSON payloads keep integers a double cannot hold', () => {
  test('integers past ±(2^53 − 1) are exact decimal strings, as 64-bit integers of the other decoders', () => {
    const text =
      '{"id":12345678901234567890,"max":9223372036854775807,"min":-9223372036854775808,"next":9007199254740993,' +
      '"safe":9007199254740991,"small":-5,"f":1.5,"big":1e300,"frac":123456789012345678.5,"exp":1.2345678901234567e17,' +
      '"s":"12345678901234567890","arr":[18446744073709551615,1],"nested":{"ns":1700000000123456789}}';
    assert.deepEqual(json(text), {
      kind: 'json',
      value: {
        id: '12345678901234567890',
        max: '9223372036854775807',
        min: '-9223372036854775808',
        next: '9007199254740993',
        safe: 9007199254740991,
        small: -5,
        f: 1.5,
        big: 1e300,
        frac: Number('123456789012345678.5'),
        exp: Number('1.2345678901234567e17'),
        s: '12345678901234567890',
        arr: ['18446744073709551615', 1],
        nested: { ns: '1700000000123456789' },
      },
    });
  });

  test('text without such integers is what JSON.parse makes of it; digits inside strings do not count', () => {
    const text = '{"a":"99999999999999999999","b":[1,2.5e-7,-3e+20],"c":9007199254740991,"d":{"__proto__":1}}';
    assert.deepEqual(scanJson(text, 10), { tooDeep: false, unsafeInteger: false });
    assert.deepEqual(json(text), { kind: 'json', value: JSON.parse(text) });
    assert.deepEqual(scanJson('[1.0000000000000000001, 2e12345678901234567890]', 10).unsafeInteger, false);
    assert.deepEqual(scanJson('[9007199254740992]', 10).unsafeInteger, true);
    assert.equal(scanJson('[[[9007199254740993]]]', 2).tooDeep, true);
  });

  test('the slow path is as strict and as safe as JSON.parse: no prototype from the payload, bad JSON stays text', () => {
    const decoded = json('{"__proto__":{"polluted":12345678901234567890}}');
    assert.equal(decoded.kind, 'json');
    const value = (decoded as { value: Record<string, unknown> }).value;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value), ['__proto__']);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(json('{"id":12345678901234567890,'), { kind: 'text', value: '{"id":12345678901234567890,' });
    // Two values for one key: not guessed (JSON.parse keeps the last, the integer rounded); the text as it is.
    const twice = '{"a":12345678901234567890,"a":2}';
    assert.deepEqual(json(twice), { kind: 'text', value: twice });
  });
});
