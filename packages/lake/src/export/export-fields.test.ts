import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { after, describe, test } from '@vlink/fixtures/test';
import { exportedRows, jsonFrames, writeExportBag } from '../testing/export-bags.js';
import { exportMessages } from './export-messages.js';

/**
 * Every decoded field reaches `data`, whichever message of its url has it first: the STRUCT of a url is widened when
 * a later message brings a field (flatbuffers leaves out unset fields), and what still cannot be stored is counted.
 */
const SLOW = { timeout: 120_000 };
const dir = mkdtempSync(join(tmpdir(), 'lake-export-fields-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const utf8 = (text: string) => new TextEncoder().encode(text);

/**
 * True when `actual` (a `data` value read back) holds `expected` (what flatc decoded): every field with its value,
 * numbers and 64-bit decimal strings compared as text, a `JSON` leaf (a list that was empty in the url's first
 * message) as the value's JSON text.
 */
function holds(expected: unknown, actual: unknown, at: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${at}: a list, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${at}: length`);
    for (const [i, item] of expected.entries()) holds(item, actual[i], `${at}[${i}]`);
  } else if (typeof expected === 'object' && expected !== null) {
    assert.ok(typeof actual === 'object' && actual !== null, `${at}: a STRUCT, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      assert.ok(key in actual, `${at}.${key} missing`);
      holds(value, (actual as Record<string, unknown>)[key], `${at}.${key}`);
    }
  } else {
    const text = typeof actual === 'string' ? actual : String(actual);
    assert.ok(text === String(expected) || text === JSON.stringify(expected), `${at}: ${text} ≠ ${expected}`);
  }
}

describe('exportMessages: fields a url’s first message lacks', () => {
  test(
    'flatbuffers: every field flatc decodes is in data (was: those absent from the first message dropped)',
    SLOW,
    async () => {
      const file = fixturePath('foreign', 'flatbuffers', 'flatbuffer.mcap');
      const expected = JSON.parse(readFileSync(`${file}.expected.json`, 'utf8')) as {
        decoded: { index: number; topic: string; fields: Record<string, unknown> }[];
      };
      const out = join(dir, 'flatbuffers');
      const report = await exportMessages([file], out);
      assert.equal(report.decodeFailures, 0);
      assert.equal(report.droppedFields, 0);
      const rows = await exportedRows(out, 'seq, url, data');
      assert.equal(rows.length, expected.decoded.length);
      for (const sample of expected.decoded) {
        const row = rows.find((r) => Number(r['seq']) === sample.index)!;
        assert.equal(row['url'], sample.topic);
        holds(sample.fields, row['data'], `#${sample.index}`);
      }
      // The fields the first /fb/pose message lacks, read as the report's SQL read them.
      const pose2 = rows.find((r) => Number(r['seq']) === 4)!['data'] as Record<string, unknown>;
      assert.equal(pose2['big'], '-2');
      assert.equal(pose2['level'], 'Error');
    },
  );

  test('JSON: new fields widen the STRUCT, nested ones too; what cannot be a field is counted', SLOW, async () => {
    const payloads = [
      { a: 1 },
      { a: 2, b: 'x' },
      { a: 3, n: { c: 1 } },
      { a: 4, n: { c: 2, d: true }, l: [{ p: 1 }] },
      { a: 5, l: [{ p: 2, q: 'z' }] },
      // `A` differs from `a` only in case: DuckDB's STRUCT names are case-insensitive, it cannot be one more field
      { a: 6, A: 7 },
    ];
    const frames = jsonFrames(payloads.map((p) => utf8(JSON.stringify(p))));
    const bag = join(dir, 'json.vcap');
    await writeExportBag(bag, frames);
    const out = join(dir, 'json');
    const report = await exportMessages([bag], out);
    assert.equal(report.droppedFields, 1);
    assert.equal(report.perUrl['/j']?.droppedFields, 1);
    const rows = await exportedRows(out, 'seq, data');
    assert.deepEqual(
      rows.map((r) => r['data']),
      [
        { a: 1, b: null, n: null, l: null },
        { a: 2, b: 'x', n: null, l: null },
        { a: 3, b: null, n: { c: 1, d: null }, l: null },
        { a: 4, b: null, n: { c: 2, d: true }, l: [{ p: 1, q: null }] },
        { a: 5, b: null, n: null, l: [{ p: 2, q: 'z' }] },
        { a: 6, b: null, n: null, l: null },
      ],
    );
  });

  test('a url whose messages keep bringing new keys: widened 8 times in a bag, then counted', SLOW, async () => {
    const frames = jsonFrames(Array.from({ length: 12 }, (_, i) => utf8(JSON.stringify({ [`k${i}`]: i }))));
    const bag = join(dir, 'keys.vcap');
    await writeExportBag(bag, frames);
    const report = await exportMessages([bag], join(dir, 'keys'));
    assert.equal(report.droppedFields, 3);
    assert.equal(report.messages, 12);
  });

  test('a field named __proto__ is a field like any other (was: dropped from the STRUCT)', SLOW, async () => {
    const frames = jsonFrames([
      utf8('{"__proto__": {"x": 1}, "a": 1, "s": "p"}'),
      // a \u escape: parsed by JSON.parse and written by the typed writer, without a __proto__ of its own
      utf8('{"a": 2, "s": "\\u0041"}'),
    ]);
    const bag = join(dir, 'proto.vcap');
    await writeExportBag(bag, frames);
    const out = join(dir, 'proto');
    await exportMessages([bag], out);
    const rows = await exportedRows(out, 'seq, data."__proto__".x AS x, data."__proto__" IS NULL AS none, data.s AS s');
    assert.deepEqual(
      rows.map((r) => [Number(r['seq']), r['x'], r['none'], r['s']]),
      [
        [0, 1, false, 'p'],
        [1, null, true, 'A'],
      ],
    );
  });
});
