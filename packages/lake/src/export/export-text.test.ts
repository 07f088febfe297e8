import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, describe, test } from '@vlink/fixtures/test';
import { jsonFrames, writeExportBag } from '../testing/export-bags.js';
import { withoutLoneSurrogates } from './data-structure.js';
import { exportMessages } from './export-messages.js';

const SLOW = { timeout: 120_000 };
const utf8 = (text: string) => new TextEncoder().encode(text);

describe('withoutLoneSurrogates', () => {
  test('replaces each lone surrogate escape JSON.stringify writes, and nothing else', () => {
    assert.equal(withoutLoneSurrogates(JSON.stringify({ s: 'plain', e: '😀' })), undefined, 'a valid pair is raw');
    assert.equal(withoutLoneSurrogates(JSON.stringify({ s: '\ud800x' })), '{"s":"\\ufffdx"}');
    assert.equal(withoutLoneSurrogates(JSON.stringify({ s: 'a\udfffb\udc00' })), '{"s":"a\\ufffdb\\ufffd"}');
    // A backslash followed by the text "ud800" is an escaped backslash, not a surrogate.
    assert.equal(withoutLoneSurrogates(JSON.stringify({ s: '\\ud800' })), undefined);
    // An escaped backslash, then a lone surrogate.
    assert.equal(withoutLoneSurrogates(JSON.stringify({ s: '\\\ud800' })), '{"s":"\\\\\\ufffd"}');
    const fixed = withoutLoneSurrogates(JSON.stringify({ s: '\ud83d', t: '\\ud83d', u: '😀\ude00' }))!;
    assert.deepEqual(JSON.parse(fixed), { s: '\ufffd', t: '\\ud83d', u: '😀\ufffd' });
  });
});

describe('exportMessages: text no UTF-8 can hold', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-export-text-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function exportedRows(out: string): Promise<Array<{ payload: Uint8Array; data: unknown }>> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const glob = join(out, 'messages', '**', '*.parquet').replaceAll("'", "''");
      const result = await connection.runAndReadAll(
        `SELECT payload, data FROM read_parquet('${glob}', hive_partitioning = true) ORDER BY seq`,
      );
      return result.getRowObjectsJS().map((row) => ({
        payload: new Uint8Array(row.payload as Uint8Array),
        data: row.data,
      }));
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  }

  // [case, payload texts, the `s` each row's data holds]
  for (const [name, texts, strings] of [
    [
      'a later message',
      ['{"s":"ok","n":1}', '{"s":"\\ud800x","n":2}', '{"s":"😀","n":3}', '{"s":"a\\u0000b","n":4}'],
      ['ok', '\ufffdx', '😀', 'a\u0000b'],
    ],
    ['the first message', ['{"s":"\\udfff","n":1}', '{"s":"\\\\ud800","n":2}'], ['\ufffd', '\\ud800']],
  ] as const) {
    test(`a lone surrogate in ${name}: exported as U+FFFD in data, payload as recorded, counted`, SLOW, async () => {
      const frames = jsonFrames(texts.map(utf8));
      const bag = join(dir, `${name.replaceAll(' ', '-')}.vcap`);
      await writeExportBag(bag, frames);
      const out = join(dir, `out-${name.replaceAll(' ', '-')}`);
      const report = await exportMessages([bag], out);
      assert.equal(report.messages, texts.length);
      assert.equal(report.textReplaced, 1);
      assert.equal(report.perUrl['/j']?.textReplaced, 1);
      assert.equal(report.decodeFailures, 0);
      const rows = await exportedRows(out);
      assert.equal(rows.length, texts.length);
      rows.forEach((row, i) => {
        assert.deepEqual(row.payload, frames[i]!.frame.data, `#${i} payload`);
        assert.deepEqual(row.data, { s: strings[i], n: i + 1 }, `#${i} data`);
      });
    });
  }
});
