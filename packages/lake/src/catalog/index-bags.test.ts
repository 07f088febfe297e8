import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actionText, BagReader, type BagSummary, summarizeBag } from '@vlink/bag';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BAG_COLUMNS, CATALOG_BAGS_FILE, CATALOG_URLS_FILE, URL_COLUMNS } from '../layout.js';
import { type IndexEvent, indexBags } from './index-bags.js';
import {
  catalogFrames,
  copyMcapFixture,
  duckRows,
  START_MS,
  sqlPath,
  writeCatalogBag,
  writtenUrls,
} from '../testing/catalog-bags.js';

/** `indexBags` over a folder of bags in the four formats and an MCAP written by another library. */
const dir = mkdtempSync(join(tmpdir(), 'vlink-catalog-'));
const root = join(dir, 'fleet');
const catalog = join(dir, 'catalog');
after(() => rmSync(dir, { recursive: true, force: true }));

/** bag_id → the frames the test pushed into it (the MCAP fixture is checked against its reader only). */
const written = new Map([
  ['drive.vdb', catalogFrames(30, 0)],
  ['drive.vcap', catalogFrames(24, 1_000)],
  ['split/run.vdbx', catalogFrames(36, 2_000)],
  ['split/run.vcapx', catalogFrames(40, 3_000)],
]);
const MCAP_ID = 'foreign/protobuf.mcap';

before(async () => {
  for (const [id, frames] of written) await writeCatalogBag(join(root, id), frames);
  copyMcapFixture(join(root, MCAP_ID));
});

async function summaryOf(path: string): Promise<BagSummary> {
  const reader = await BagReader.create(path);
  try {
    return await summarizeBag(reader);
  } finally {
    reader.close();
  }
}

/** Payload bytes per url (key `url\x1f`) and per url + action (`url\x1faction`), read frame by frame. */
async function payloadBytesOf(path: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const reader = await BagReader.create(path);
  try {
    for await (const frame of reader.frames()) {
      for (const key of [`${frame.url}\x1f`, `${frame.url}\x1f${actionText(frame.actionType)}`])
        out.set(key, (out.get(key) ?? 0) + frame.data.byteLength);
    }
  } finally {
    reader.close();
  }
  return out;
}

const us = (value: unknown) => (value instanceof Date ? value.getTime() * 1000 : value);
const bagsSql = (at: string) => `SELECT *, epoch_us(start_time) AS start_us, epoch_us(end_time) AS end_us,
  epoch_us(modified) AS modified_us, epoch_us(indexed_at) AS indexed_us FROM read_parquet(${sqlPath(at, CATALOG_BAGS_FILE)}) ORDER BY bag_id`;
const urlsSql = (at: string) => `SELECT *, epoch_us(start_time) AS start_us, epoch_us(end_time) AS end_us
  FROM read_parquet(${sqlPath(at, CATALOG_URLS_FILE)}) ORDER BY bag_id, url, action`;

describe('indexBags: a catalog of a local folder', () => {
  let events: IndexEvent[] = [];
  before(async () => {
    const report = await indexBags([root], catalog, { onBag: (e) => events.push(e) });
    assert.deepEqual(report.failed, []);
    assert.equal(report.added, 5);
  });

  test('split segments are not bags; every bag was opened once', () => {
    assert.deepEqual(events.map((e) => `${e.bagId} ${e.outcome}`).sort(), [
      'drive.vcap added',
      'drive.vdb added',
      `${MCAP_ID} added`,
      'split/run.vcapx added',
      'split/run.vdbx added',
    ]);
    assert.ok(readdirSync(join(root, 'split')).length > 4, 'segments were written beside the manifests');
  });

  test('Parquet types are the layout: TIMESTAMP columns are timestamps, counts BIGINT', async () => {
    for (const [file, columns] of [
      [CATALOG_BAGS_FILE, BAG_COLUMNS],
      [CATALOG_URLS_FILE, URL_COLUMNS],
    ] as const) {
      const described = await duckRows(`DESCRIBE SELECT * FROM read_parquet(${sqlPath(catalog, file)})`);
      assert.deepEqual(
        described.map((c) => [c['column_name'], c['column_type']]),
        columns.map((c) => [c.name, c.type]),
      );
    }
    const [row] = await duckRows(
      `SELECT typeof(start_time) AS t, start_time + INTERVAL 1 SECOND > start_time AS ok FROM read_parquet(${sqlPath(catalog, CATALOG_BAGS_FILE)}) LIMIT 1`,
    );
    assert.deepEqual(row, { t: 'TIMESTAMP', ok: true });
  });

  test('every bag row equals info --json of its bag and the numbers the test wrote', async () => {
    const rows = await duckRows(bagsSql(catalog));
    assert.deepEqual(
      rows.map((r) => r['bag_id']),
      ['drive.vcap', 'drive.vdb', MCAP_ID, 'split/run.vcapx', 'split/run.vdbx'],
    );
    for (const row of rows) {
      const id = String(row['bag_id']);
      const location = join(root, id);
      const summary = await summaryOf(location);
      assert.equal(row['location'], location);
      assert.equal(row['format'], summary.format);
      assert.equal(Number(row['size_bytes']), summary.fileSize, `${id}: size of all its files`);
      assert.equal(row['etag'], null);
      assert.equal(Number(row['message_count']), summary.messageCount);
      assert.equal(row['url_count'], summary.urls.length);
      const first = Math.min(...summary.streams.map((s) => s.firstLogUs));
      const last = Math.max(...summary.streams.map((s) => s.lastLogUs));
      const startUs = Math.round(summary.startTimestamp * 1000);
      assert.equal(Number(row['start_us']), startUs + first);
      assert.equal(Number(row['end_us']), startUs + last);
      assert.equal(Number(row['duration_us']), last - first);
      const header = JSON.parse(String(row['header_json'])) as Record<string, unknown>;
      for (const key of ['format', 'version', 'tagName', 'messageCount', 'startTimestamp', 'recording', 'errors'])
        assert.deepEqual(header[key], summary[key as keyof BagSummary], `${id}: header ${key}`);
      assert.deepEqual(JSON.parse(String(row['tags_json'])), {
        tagName: summary.tagName,
        metadata: summary.metadata ?? [],
      });
      const frames = written.get(id);
      if (!frames) {
        assert.equal(row['format'], 'mcap');
        assert.equal(Number(row['message_count']), 45, 'the count the Python mcap library wrote');
        assert.equal(
          Number(row['start_us']),
          1_700_000_000_123_456,
          'its first log time, ns 1700000000123456790 in µs',
        );
        continue;
      }
      assert.equal(Number(row['message_count']), frames.length);
      assert.equal(Number(row['start_us']), START_MS * 1000 + frames[0]!.timestamp);
      assert.equal(Number(row['end_us']), START_MS * 1000 + frames[frames.length - 1]!.timestamp);
      assert.equal(Number(row['dropped']), 0);
    }
  });

  test('every url row equals info --json of its bag, its log times and gaps those the test wrote', async () => {
    const rows = await duckRows(urlsSql(catalog));
    const ids = [...written.keys(), MCAP_ID];
    for (const id of ids) {
      const summary = await summaryOf(join(root, id));
      const payload = await payloadBytesOf(join(root, id));
      const own = rows.filter((r) => r['bag_id'] === id);
      assert.equal(own.length, summary.urls.length, id);
      for (const meta of summary.urls) {
        const row = own.find((r) => r['url'] === meta.url && (r['action'] ?? undefined) === meta.action);
        assert.ok(row, `${id} ${meta.url}`);
        assert.equal(row['type'], meta.type);
        assert.equal(row['ser'], meta.ser);
        assert.equal(Number(row['message_count']), meta.count);
        // The payload bytes read; info knows them for VLink formats only (its size is 0 for the MCAP).
        const read = payload.get(`${meta.url}\x1f${meta.action ?? ''}`) ?? 0;
        assert.ok(read > 0, `${id} ${meta.url} has payloads`);
        assert.equal(Number(row['bytes']), read, `${id} ${meta.url} bytes`);
        if (meta.size > 0) assert.equal(read, meta.size);
        const streams = summary.streams.filter((s) => s.url === meta.url);
        const startUs = Math.round(summary.startTimestamp * 1000);
        assert.equal(Number(row['start_us']), startUs + Math.min(...streams.map((s) => s.firstLogUs)));
        assert.equal(Number(row['end_us']), startUs + Math.max(...streams.map((s) => s.lastLogUs)));
        if (streams.length === 1 && streams[0]!.count > 1)
          assert.ok(Math.abs(Number(row['rate_hz']) - streams[0]!.rateHz) < 1e-9, `${id} ${meta.url} rate`);
      }
      const frames = written.get(id);
      if (!frames) continue;
      for (const [url, expected] of writtenUrls(frames)) {
        const row = own.find((r) => r['url'] === url)!;
        assert.equal(Number(row['message_count']), expected.count, `${id} ${url} count`);
        assert.equal(Number(row['bytes']), expected.bytes, `${id} ${url} bytes`);
        assert.equal(Number(row['start_us']), START_MS * 1000 + expected.firstUs);
        assert.equal(Number(row['end_us']), START_MS * 1000 + expected.lastUs);
        const rate = (expected.count - 1) / ((expected.lastUs - expected.firstUs) / 1e6);
        assert.ok(Math.abs(Number(row['rate_hz']) - rate) < 1e-9, `${id} ${url} rate ${row['rate_hz']} vs ${rate}`);
        assert.equal(Number(row['max_gap_us']), expected.maxGapUs, `${id} ${url} max gap`);
        assert.equal(Number(row['gap_count']), expected.gaps, `${id} ${url} gaps`);
        assert.ok(expected.gaps >= 1, 'the test bags have a hole');
      }
    }
  });

  describe('incremental runs', () => {
    test('nothing changed: no bag is opened, every row kept as it was', async () => {
      const before = await duckRows(bagsSql(catalog));
      events = [];
      const report = await indexBags([root], catalog, { onBag: (e) => events.push(e) });
      assert.deepEqual(
        { ...report, catalog: undefined },
        {
          catalog: undefined,
          added: 0,
          updated: 0,
          unchanged: 5,
          removed: 0,
          failed: [],
          bags: 5,
          urls: report.urls,
        },
      );
      assert.ok(events.every((e) => e.outcome === 'unchanged'));
      const now = await duckRows(bagsSql(catalog));
      assert.deepEqual(now.map(us), before.map(us));
    });

    test('one bag rewritten → updated; one deleted → removed; one corrupt → failed with its code', async () => {
      const rewritten = catalogFrames(50, 7_000);
      await writeCatalogBag(join(root, 'drive.vdb'), rewritten, 'rewritten');
      rmSync(join(root, 'drive.vcap'));
      writeFileSync(
        join(root, 'broken.vcap'),
        Uint8Array.from({ length: 4096 }, (_, i) => (i * 7) & 0xff),
      );
      const report = await indexBags([root], catalog);
      assert.equal(report.added, 0);
      assert.equal(report.updated, 1);
      assert.equal(report.unchanged, 3);
      assert.equal(report.removed, 1);
      assert.equal(report.failed.length, 1);
      assert.equal(report.failed[0]!.location, join(root, 'broken.vcap'));
      assert.match(report.failed[0]!.code, /^(CORRUPT_FILE|UNSUPPORTED_FORMAT)$/);
      assert.equal(report.bags, 4);
      const rows = await duckRows(bagsSql(catalog));
      assert.deepEqual(
        rows.map((r) => r['bag_id']),
        ['drive.vdb', MCAP_ID, 'split/run.vcapx', 'split/run.vdbx'],
      );
      const vdb = rows[0]!;
      assert.equal(Number(vdb['message_count']), rewritten.length);
      assert.equal(JSON.parse(String(vdb['tags_json'])).tagName, 'rewritten');
      const urls = await duckRows(urlsSql(catalog));
      assert.deepEqual(
        [...new Set(urls.map((r) => r['bag_id']))],
        rows.map((r) => r['bag_id']),
      );
      assert.equal(
        Number(urls.find((r) => r['bag_id'] === 'drive.vdb' && r['url'] === '/lidar')!['message_count']),
        50,
      );
      // A bag that fails again is reported again (never kept as a stale or silent row).
      const again = await indexBags([root], catalog);
      assert.equal(again.failed.length, 1);
      assert.equal(again.unchanged, 4);
      rmSync(join(root, 'broken.vcap'));
    });
  });
});

describe('indexBags: what it refuses, and says so', () => {
  const other = join(dir, 'errors');
  before(async () => {
    await writeCatalogBag(join(other, 'a', 'same.vdb'), catalogFrames(6));
    await writeCatalogBag(join(other, 'b', 'same.vdb'), catalogFrames(8));
  });

  test('no source, or a folder that does not exist: a typed error, no catalog written', async () => {
    await assert.rejects(indexBags([], join(other, 'none')), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(indexBags([join(other, 'missing')], join(other, 'none')), { code: 'NOT_FOUND' });
    assert.deepEqual(readdirSync(join(other, 'none')), []);
  });

  test('two roots with the same relative path: the second is a failure, the first keeps its row', async () => {
    const at = join(other, 'catalog-same');
    const report = await indexBags([join(other, 'a'), join(other, 'b')], at);
    assert.equal(report.added, 1);
    assert.deepEqual(
      report.failed.map((f) => [f.location, f.code]),
      [[join(other, 'b', 'same.vdb'), 'INVALID_ARGUMENT']],
    );
    assert.match(report.failed[0]!.message, /separate catalogs/);
    const rows = await duckRows(bagsSql(at));
    assert.deepEqual(
      rows.map((r) => [r['location'], Number(r['message_count'])]),
      [[join(other, 'a', 'same.vdb'), catalogFrames(6).length]],
    );
  });

  test('overlapping sources: each bag once, named by the first source', async () => {
    const at = join(other, 'catalog-overlap');
    const report = await indexBags([other, join(other, 'a')], at);
    assert.deepEqual(report.failed, []);
    const rows = await duckRows(bagsSql(at));
    assert.deepEqual(
      rows.map((r) => [r['bag_id'], r['location']]),
      [
        ['a/same.vdb', join(other, 'a', 'same.vdb')],
        ['b/same.vdb', join(other, 'b', 'same.vdb')],
      ],
    );
  });

  test('an existing catalog that is not Parquet: CORRUPT_FILE, and the file is left as it was', async () => {
    const at = join(other, 'catalog-bad');
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, CATALOG_BAGS_FILE), 'not parquet');
    await assert.rejects(indexBags([join(other, 'a')], at), { code: 'CORRUPT_FILE' });
    assert.equal(readFileSync(join(at, CATALOG_BAGS_FILE), 'utf8'), 'not parquet');
  });
});
