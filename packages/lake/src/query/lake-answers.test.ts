import assert from 'node:assert/strict';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { type Lake, openLake } from './lake.js';
import { isoFromMicros } from './values.js';

let lake: Lake;
before(async () => {
  lake = await openLake({});
});
after(() => lake?.close());

const rowsOf = async (sql: string) => (await lake.query(sql)).rows;
const utf8 = (text: string) => new TextEncoder().encode(text).length;

describe('lake answers: values', () => {
  test('a member named __proto__ is kept (struct, map, nested) and no prototype is touched', async () => {
    const [[struct, map, nested]] = (await rowsOf(
      `SELECT {'__proto__': 1, 'a': 2} AS s, MAP {'__proto__': {'x': 1}} AS m,
        [{'__proto__': {'constructor': 3}}] AS l`,
    )) as [[Record<string, unknown>, Record<string, unknown>, Record<string, unknown>[]]];
    assert.equal(JSON.stringify(struct), '{"__proto__":1,"a":2}');
    assert.equal(JSON.stringify(map), '{"__proto__":{"x":1}}');
    assert.equal(JSON.stringify(nested), '[{"__proto__":{"constructor":3}}]');
    assert.deepEqual(Object.keys(struct), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(struct), Object.prototype);
    assert.equal(Object.getPrototypeOf(map), Object.prototype);
    assert.equal(({} as Record<string, unknown>).x, undefined, 'Object.prototype is untouched');
  });

  test('times past JS Date’s range are exact; infinities read infinity; before 1970 is floored', async () => {
    const [row] = await rowsOf(`SELECT TIMESTAMP '294247-01-01' AS far, TIMESTAMP '290309-12-22 (BC) 00:00:00' AS bc,
      '-infinity'::TIMESTAMP AS neg, 'infinity'::DATE AS d1, '-infinity'::DATE AS d2, DATE '2026-12-01' AS d3,
      TIMESTAMP_NS '1969-12-31 23:59:59.999999999' AS ns, TIMESTAMP_NS '2026-12-01 10:00:00.123456789' AS ns2,
      TIMESTAMP_MS '1969-12-31 23:59:59.999' AS ms, TIMESTAMP_S '10000-01-01 00:00:01' AS s,
      'infinity'::TIMESTAMP_NS AS nsinf, '-infinity'::TIMESTAMP_S AS sinf, TIMESTAMPTZ '1969-12-31 23:59:59.5+00' AS tz`);
    assert.deepEqual(row, [
      '+294247-01-01T00:00:00.000000Z',
      '-290308-12-22T00:00:00.000000Z',
      '-infinity',
      'infinity',
      '-infinity',
      '2026-12-01',
      '1969-12-31T23:59:59.999999999Z',
      '2026-12-01T10:00:00.123456789Z',
      '1969-12-31T23:59:59.999000Z',
      '+010000-01-01T00:00:01.000000Z',
      'infinity',
      '-infinity',
      '1969-12-31T23:59:59.500000Z',
    ]);
  });

  test('isoFromMicros equals JS Date’s text (with µs) across its whole range', () => {
    const limit = 8.64e15;
    const samples = [0, -1, 1, -86_400_000, 951_782_400_000, -62_135_596_800_001, -62_198_755_200_000, limit, -limit];
    for (let i = 0; i < 2000; i++) samples.push(Math.round((Math.random() * 2 - 1) * limit));
    for (const millis of samples) {
      const micros = BigInt(millis) * 1000n + 123n;
      const expected = `${new Date(millis).toISOString().slice(0, -1)}123Z`;
      assert.equal(isoFromMicros(micros), expected, String(millis));
    }
  });
});

describe('lake answers: byte budget', () => {
  const MIXED = `SELECT i, 'a"b\\c' || chr(10) || chr(1) || 'é€😀' || repeat('x', i) AS text, i % 2 = 0 AS even,
    NULL AS nothing, 1.5 * i AS half, {'k': [i, NULL], 'ü': {'n': 'q'}} AS s, MAP {'a': i, 'b"': 2} AS named,
    MAP {1: 'x', 2: NULL} AS keyed, [[], ['y']] AS nest, 12345678901234567890::HUGEINT AS huge,
    TIMESTAMP '2026-12-01 10:00:00' AS t, '\\xAB'::BLOB AS b FROM range(40) r(i)`;

  test('maxBytes is the UTF-8 size of the rows’ JSON: exactly it answers, one byte less is LIMIT_REACHED', async () => {
    const all = await lake.query(MIXED);
    const bytes = utf8(JSON.stringify(all.rows));
    assert.deepEqual((await lake.query(MIXED, { maxBytes: bytes })).rows, all.rows);
    await assert.rejects(lake.query(MIXED, { maxBytes: bytes - 1 }), {
      code: 'LIMIT_REACHED',
      message: `the answer is over ${bytes - 1} bytes of JSON (at row 40): ask fewer rows or columns`,
    });
    const limited = await lake.query(MIXED, { limit: 3 });
    assert.deepEqual(
      (await lake.query(MIXED, { limit: 3, maxBytes: utf8(JSON.stringify(limited.rows)) })).rows,
      limited.rows,
    );
    await assert.rejects(lake.query('SELECT 1', { maxBytes: 0 }), { code: 'INVALID_ARGUMENT' });
  });

  test('a huge answer stops at the first value past the budget, before the rest is made', async () => {
    const started = Date.now();
    // 16 values of 20 MB: 320 MB of JS strings if every row were made before measuring
    await assert.rejects(lake.query("SELECT repeat('x', 20000000) AS big FROM range(16)", { maxBytes: 1_000_000 }), {
      code: 'LIMIT_REACHED',
      message: 'the answer is over 1000000 bytes of JSON (at row 1): ask fewer rows or columns',
    });
    // one LIST value of 300 strings of 1 MB, refused after about three of them
    await assert.rejects(
      lake.query("SELECT list(repeat('y', 1000000)) AS all_of_them FROM range(300)", { maxBytes: 3_000_000 }),
      { code: 'LIMIT_REACHED', message: /at row 1\)/ },
    );
    assert.ok(Date.now() - started < 30_000);
    assert.deepEqual(await rowsOf('SELECT 42'), [[42]]);
  });
});
