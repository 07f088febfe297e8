import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { exportFrames, type PushedFrame, START_MS, URLS, writeExportBag } from '../testing/export-bags.js';
import { encodeUrlPartition } from './paths.js';
import { exportMessages } from './export-messages.js';

const FORMATS = ['vdb', 'vdbx', 'vcap', 'vcapx'] as const;
const FRAMES = exportFrames(48);
const SLOW = { timeout: 120_000 };

interface Row {
  bag_id: string;
  url: string;
  date: string;
  action: string;
  ser: string;
  seq: number;
  log_us: number;
  pub_us: number;
  size: number;
  payload: Uint8Array;
  data: Record<string, unknown> | null;
  file_url: string;
}

/**
 * Every exported row, read back with DuckDB over the hive-partitioned dataset, url by url (each url has its own
 * `data` STRUCT; read across urls, union_by_name would merge their fields), in (bag, seq) order.
 */
async function readExport(outDir: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const folder of readdirSync(join(outDir, 'messages')))
    rows.push(...(await readUrl(join(outDir, 'messages', folder))));
  return rows.sort((a, b) => (a.bag_id < b.bag_id ? -1 : a.bag_id > b.bag_id ? 1 : a.seq - b.seq));
}

async function readUrl(urlDir: string): Promise<Row[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const glob = join(urlDir, '**', '*.parquet').replaceAll("'", "''");
    const result = await connection.runAndReadAll(
      `SELECT *, epoch_us(log_time) AS log_us, epoch_us(publish_time) AS pub_us FROM read_parquet('${glob}', hive_partitioning = true, ` +
        'union_by_name = true, hive_types_autocast = false, filename = true) ORDER BY bag_id, seq',
    );
    return result.getRowObjectsJS().map((row) => ({
      bag_id: row.bag_id as string,
      url: row.url as string,
      date: row.date as string,
      action: row.action as string,
      ser: row.ser as string,
      seq: Number(row.seq),
      log_us: Number(row.log_us),
      pub_us: Number(row.pub_us),
      size: Number(row.size),
      payload: new Uint8Array(row.payload as Uint8Array),
      data: (row.data ?? null) as Record<string, unknown> | null,
      file_url: /url=([^/\\]*)/.exec(row.filename as string)![1]!,
    }));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Checks the rows of one bag against the frames the test pushed, message by message. */
function assertBagRows(rows: readonly Row[], bagId: string, frames: readonly PushedFrame[]): void {
  const bagRows = rows.filter((row) => row.bag_id === bagId);
  assert.equal(bagRows.length, frames.length, `${bagId}: rows`);
  frames.forEach(({ frame, data }, i) => {
    const row = bagRows[i]!;
    assert.equal(row.seq, i);
    assert.equal(row.url, frame.url);
    assert.equal(row.file_url, encodeUrlPartition(frame.url));
    assert.equal(row.log_us, START_MS * 1000 + frame.timestamp, `${bagId} #${i} log time`);
    assert.equal(row.pub_us, START_MS * 1000 + frame.publishTime!, `${bagId} #${i} publish time`);
    assert.equal(row.date, new Date(START_MS + frame.timestamp / 1000).toISOString().slice(0, 10));
    assert.equal(row.action, 'Pub');
    assert.equal(row.ser, frame.serType);
    assert.equal(row.size, frame.data.byteLength);
    assert.deepEqual(row.payload, frame.data, `${bagId} #${i} payload`);
    assert.deepEqual(row.data, data ?? null, `${bagId} #${i} data`);
  });
}

describe('exportMessages', () => {
  let dir = '';
  const bags: string[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lake-export-'));
    for (const format of FORMATS) {
      const path = join(dir, `bags/run.${format}`);
      await writeExportBag(path, FRAMES);
      bags.push(path);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('all four formats: every message with its times, payload and decoded fields', SLOW, async () => {
    const out = join(dir, 'out-all');
    const report = await exportMessages(bags, out);
    assert.equal(report.bags, 4);
    assert.equal(report.skipped, 0);
    assert.equal(report.messages, 4 * FRAMES.length);
    assert.equal(report.decodeFailures, 4, 'one corrupt protobuf payload per bag');
    assert.equal(report.perUrl[URLS.protobuf]?.decodeFailures, 4);
    assert.equal(report.perUrl[URLS.raw]?.decodeFailures, 0);
    assert.equal(report.payloadBytes, 4 * FRAMES.reduce((sum, f) => sum + f.frame.data.byteLength, 0));
    // 4 urls × 2 dates (the bag crosses midnight) × 4 bags
    assert.equal(report.files, 32);
    const rows = await readExport(out);
    assert.equal(rows.length, report.messages);
    for (const bag of bags) assertBagRows(rows, bag, FRAMES);
    const dates = new Set(rows.map((row) => row.date));
    assert.deepEqual([...dates].sort(), ['2026-03-14', '2026-03-15']);
  });

  test('partition folders: one per url, percent-encoded, nothing else under messages/', SLOW, async () => {
    const out = join(dir, 'out-all');
    const folders = readdirSync(join(out, 'messages')).sort();
    assert.deepEqual(
      folders,
      Object.values(URLS)
        .map((url) => `url=${encodeUrlPartition(url)}`)
        .sort(),
    );
    assert.ok(folders.every((name) => !/[/ '*]/.test(name.slice(4))));
    assert.equal(decodeURIComponent(`url=${encodeUrlPartition(URLS.json)}`.slice(4)), URLS.json);
  });

  test('a rerun skips finished bags; an interrupted bag is redone without duplicates', SLOW, async () => {
    const out = join(dir, 'out-resume');
    const controller = new AbortController();
    let files = 0;
    await assert.rejects(
      exportMessages(bags, out, {
        rowGroupRows: 5,
        signal: controller.signal,
        onFile: () => {
          // Stop inside the second bag, after some of its parts are already renamed into place.
          if (++files === 20) controller.abort();
        },
      }),
      (error: unknown) => error instanceof BagError && error.code === 'ABORTED',
    );
    // A half-written part left by a killed process: hidden, and removed by the redo.
    const partial = await readExport(out);
    assert.ok(
      partial.some((row) => row.bag_id === bags[1]),
      'the second bag was under way',
    );
    const resumed = await exportMessages(bags, out, { rowGroupRows: 5 });
    assert.equal(resumed.skipped, 1, 'the first bag was finished');
    assert.ok(resumed.perBag[1]!.discardedFiles > 0, 'the parts of the interrupted bag were deleted');
    const again = await exportMessages(bags, out, { rowGroupRows: 5 });
    assert.equal(again.skipped, 4);
    assert.equal(again.files, 0);
    const rows = await readExport(out);
    assert.equal(rows.length, 4 * FRAMES.length);
    for (const bag of bags) assertBagRows(rows, bag, FRAMES);
    assert.ok(existsSync(join(out, '_export')));
  });

  test('a catalog folder lists the bags: its bag_id and location', SLOW, async () => {
    const catalog = join(dir, 'catalog');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const values = bags.map((bag, i) => `('fleet/${FORMATS[i]}', '${bag.replaceAll("'", "''")}')`).join(', ');
    rmSync(catalog, { recursive: true, force: true });
    writeFileSync(join(dir, 'placeholder'), '');
    await connection.run(`CREATE TABLE bags AS SELECT * FROM (VALUES ${values}) AS t(bag_id, location)`);
    (await import('node:fs')).mkdirSync(catalog, { recursive: true });
    await connection.run(`COPY bags TO '${join(catalog, 'bags.parquet').replaceAll("'", "''")}' (FORMAT parquet)`);
    connection.closeSync();
    instance.closeSync();
    const out = join(dir, 'out-catalog');
    const report = await exportMessages([catalog], out);
    assert.deepEqual(
      report.perBag.map((bag) => bag.bagId),
      FORMATS.map((format) => `fleet/${format}`),
    );
    const rows = await readExport(out);
    for (const format of FORMATS) assertBagRows(rows, `fleet/${format}`, FRAMES);
  });
});
