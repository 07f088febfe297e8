import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { after, describe, test } from '@vlink/fixtures/test';
import { jsonFrames, writeExportBag } from '../testing/export-bags.js';
import { asRecord, recordJson, type Structure, withoutLoneSurrogates } from './data-structure.js';
import { sqlString } from './duckdb.js';
import { exportMessages } from './export-messages.js';
import { rawJsonCheck } from './raw-json.js';

const STRUCTURE: Structure = { a: 'DOUBLE', s: 'VARCHAR', b: 'BOOLEAN', o: { x: 'DOUBLE', y: 'VARCHAR' } };
const utf8 = (text: string) => new TextEncoder().encode(text);
const SLOW = { timeout: 120_000 };

/** Payloads the check takes: the export stages them as they are. */
const ACCEPTED = [
  '{"a":1.5,"s":"x","b":true,"o":{"x":1,"y":"q"}}',
  ' \n{ "o" : { "y" : "tab\\tquote\\"slash\\/" } , "a" : -2.5e-3 }\r\n',
  '{}',
  '{"a":null,"s":null,"b":null,"o":null}',
  '{"a":9007199254740993,"o":{"x":18446744073709551617}}',
  '{"a":123456789012345678901234,"o":{"x":-98765432109876543210.5}}',
  '{"a":0.1,"o":{"x":-0.001,"y":""}}',
  '{"s":"é ü 😀 \u{10ffff} \u07ff \u0800 \ufffd","b":false}',
  '{"a":4.9e-99,"o":{"x":1E+99}}',
  '{"a":0,"o":{"x":0.0}}',
  '{"a":0e5}',
  '{"a":6.123233995736766e-17,"o":{"x":2.2250738585072014e-8}}',
  '{"o":{}}',
];

/** Payloads it leaves to JSON.parse: [payload, why]. */
const REJECTED: Array<[string | Uint8Array, string]> = [
  ['{"a":1e400}', 'overflows to Infinity (JSON.stringify writes null)'],
  ['{"a":1e-400}', 'a 3-digit exponent (could underflow to 0)'],
  ['{"a":1234567890123456789012345}', 'longer than 24 characters'],
  ['{"a":-0}', 'negative zero (JSON.stringify writes 0)'],
  ['{"a":-0.0}', 'negative zero'],
  ['{"a":-0e1}', 'negative zero'],
  ['{"a":1,"a":2}', 'a duplicate key (JSON.parse keeps the last)'],
  ['{"o":{"x":1,"x":2}}', 'a duplicate nested key'],
  ['{"s":"\\ud800"}', 'a lone surrogate escape'],
  ['{"s":"\\u0041"}', 'a \\u escape'],
  ['{"s":"a\tb"}', 'a raw control character'],
  ['not json', 'not JSON'],
  ['{"a":NaN}', 'NaN'],
  ['{"a":1,}', 'a trailing comma'],
  ['{"a":01}', 'a leading zero'],
  ['{"a":1.}', 'no fraction digits'],
  ['{"a":.5}', 'no integer digits'],
  ['{"a":+1}', 'a plus sign'],
  ['\ufeff{"a":1}', 'a byte order mark (TextDecoder drops it)'],
  ['[1]', 'not an object'],
  ['1', 'not an object'],
  ['', 'empty'],
  ['{"a":"1.5"}', 'a string for a DOUBLE'],
  ['{"s":1}', 'a number for a VARCHAR'],
  ['{"b":1}', 'a number for a BOOLEAN'],
  ['{"o":[1]}', 'a list for a STRUCT'],
  ['{"A":1}', 'a key not in the structure'],
  ['{"z":1}', 'a key not in the structure'],
  ['{"a":1} x', 'text after the object'],
  ['{"a":tru}', 'a broken literal'],
  ['{"s":"open', 'an open string'],
  ['{"a":1', 'an open object'],
  [new Uint8Array([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), 'invalid UTF-8'],
  [new Uint8Array([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]), 'an overlong UTF-8 form'],
  [new Uint8Array([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]), 'a UTF-8 surrogate'],
  [new Uint8Array([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xf4, 0x90, 0x80, 0x80, 0x22, 0x7d]), 'past U+10FFFF'],
  [new Uint8Array([0x7b, 0x22, 0x73, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d]), 'a cut UTF-8 sequence'],
];

const bytesOf = (payload: string | Uint8Array) => (typeof payload === 'string' ? utf8(payload) : payload);

/** Numbers written as programs and people write them, to compare DuckDB's reading of them with JSON.parse's. */
function numberTexts(count: number): string[] {
  let seed = 7;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return (seed - 1) / 2147483646;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const sign = random() < 0.3 ? -1 : 1;
    const x = sign * random() * 10 ** Math.floor(random() * 60 - 30);
    const digits = 1 + Math.floor(random() * 21);
    const forms = [
      String(x),
      x.toPrecision(digits),
      x.toExponential(digits - 1),
      String(Math.round(x * 1e6)),
      `${sign < 0 ? '-' : ''}${Math.floor(random() * 1e9)}${String(Math.floor(random() * 1e9)).padStart(9, '0')}${Math.floor(random() * 1e4)}`,
    ];
    out.push(forms[i % forms.length]!);
  }
  return out;
}

/** `json_transform(text, STRUCTURE)` as VARCHAR (so −0 and 0 differ) of each text, in order. */
async function transformed(connection: DuckDBConnection, texts: readonly string[]): Promise<unknown[]> {
  await connection.run('CREATE OR REPLACE TABLE texts (i INTEGER, t VARCHAR)');
  const appender = await connection.createAppender('texts');
  texts.forEach((text, i) => {
    appender.appendInteger(i);
    appender.appendVarchar(text);
    appender.endRow();
  });
  appender.closeSync();
  const result = await connection.runAndReadAll(
    `SELECT json_transform(t, ${sqlString(JSON.stringify(STRUCTURE))})::VARCHAR AS v FROM texts ORDER BY i`,
  );
  return result.getRowObjectsJS().map((row) => row.v);
}

/** What the export gives a JSON payload through JSON.parse: the JSON text of its record (empty text reads as null). */
const parsedJson = (text: string) => recordJson(asRecord(text === '' ? null : JSON.parse(text)));

describe('rawJsonCheck', () => {
  const check = rawJsonCheck(STRUCTURE)!;

  test('takes plain JSON objects of the structure and leaves everything that could differ to JSON.parse', () => {
    for (const payload of ACCEPTED) assert.ok(check(utf8(payload)), `accepts ${payload}`);
    for (const [payload, why] of REJECTED) assert.ok(!check(bytesOf(payload)), `rejects ${String(payload)}: ${why}`);
  });

  test('no check for lists, JSON leaves or names JSON escapes', () => {
    assert.equal(rawJsonCheck({ a: ['DOUBLE'] }), undefined);
    assert.equal(rawJsonCheck({ a: 'JSON' }), undefined);
    assert.equal(rawJsonCheck({ 'q"': 'DOUBLE' }), undefined);
    assert.equal(rawJsonCheck({ 'a\\b': 'DOUBLE' }), undefined);
    assert.equal(rawJsonCheck({ 'a\nb': 'DOUBLE' }), undefined);
    assert.equal(rawJsonCheck({ 'a\ud800': 'DOUBLE' }), undefined);
    assert.equal(rawJsonCheck('DOUBLE'), undefined);
    assert.ok(rawJsonCheck({ 'é ü': { 'x y': 'BOOLEAN' } })!(utf8('{"é ü":{"x y":true}}')));
  });

  test('keys in any order, one a prefix of another; each key once', () => {
    const prefix = rawJsonCheck({ a: 'DOUBLE', ab: 'DOUBLE' })!;
    for (const text of ['{"ab":1,"a":2}', '{"a":1,"ab":2}', '{"ab":1}', '{ "a" :1}'])
      assert.ok(prefix(utf8(text)), text);
    for (const text of ['{"ab":1,"ab":2}', '{"abc":1}', '{"a\\u0062":1}', '{"":1}', '{"a":1,"ab":2,"a":3}']) {
      assert.ok(!prefix(utf8(text)), text);
    }
  });

  test('json_transform of an accepted payload is json_transform of its JSON.parse record', async () => {
    const numbers = numberTexts(3000).flatMap((n) => [`{"a":${n}}`, `{"o":{"x":${n},"y":"${n}"}}`]);
    const accepted = [...ACCEPTED, ...numbers].filter((text) => check(utf8(text)));
    assert.ok(accepted.length > 5000, `${accepted.length} of the numbers accepted`);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const raw = await transformed(connection, accepted);
      const parsed = await transformed(connection, accepted.map(parsedJson));
      accepted.forEach((text, i) => {
        assert.equal(raw[i], parsed[i], text);
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});

describe('exportMessages: JSON payloads staged as they are', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-export-raw-json-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a url mixing accepted and rejected payloads: every row as through JSON.parse', SLOW, async () => {
    // Past two data chunks, accepted and rejected payloads interleaved, the first message giving the structure.
    const payloads: Uint8Array[] = [];
    for (let i = 0; payloads.length < 5000; i++) {
      payloads.push(utf8(ACCEPTED[i % ACCEPTED.length]!));
      if (i % 3 === 0) payloads.push(bytesOf(REJECTED[i % REJECTED.length]![0]));
      if (i % 7 === 0) payloads.push(utf8(`{"a":${i},"s":"n${i}","b":true,"o":{"x":${-i / 8},"y":"${i}"}}`));
    }
    const frames = jsonFrames(payloads);
    const bag = join(dir, 'mixed.vcap');
    await writeExportBag(bag, frames);
    const out = join(dir, 'out');
    const report = await exportMessages([bag], out);
    assert.equal(report.messages, payloads.length);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    // The expected `data`: the JSON text of the record JSON.parse gives (lone surrogates replaced, as the export
    // does), or none when the payload does not decode.
    const expected = payloads.map((payload) => {
      try {
        const text = parsedJson(decoder.decode(payload));
        return withoutLoneSurrogates(text) ?? text;
      } catch {
        return undefined;
      }
    });
    assert.equal(report.decodeFailures, expected.filter((text) => text === undefined).length);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const wanted = await transformed(
        connection,
        expected.map((text) => text ?? 'null'),
      );
      const glob = join(out, 'messages', '**', '*.parquet').replaceAll("'", "''");
      const rows = (
        await connection.runAndReadAll(
          `SELECT payload, data::VARCHAR AS data FROM read_parquet('${glob}', hive_partitioning = true) ORDER BY seq`,
        )
      ).getRowObjectsJS();
      assert.equal(rows.length, payloads.length);
      rows.forEach((row, i) => {
        assert.deepEqual(new Uint8Array(row.payload as Uint8Array), payloads[i], `#${i} payload`);
        assert.equal(row.data, expected[i] === undefined ? null : wanted[i], `#${i} data of ${expected[i]}`);
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
