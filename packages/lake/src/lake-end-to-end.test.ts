import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { indexBags } from './catalog/index-bags.js';
import { exportMessages } from './export/export-messages.js';
import { openLake } from './query/lake.js';
import { catalogFrames, START_MS, writeCatalogBag, writtenUrls } from './testing/catalog-bags.js';

// The three parts together, on bags written here: `index` → catalog, `export` of that catalog → messages, and SQL
// over both, checked against the frames this test pushed (not against the lake's own numbers).
const root = mkdtempSync(join(tmpdir(), 'vlink-lake-e2e-'));
after(() => rmSync(root, { recursive: true, force: true }));
const bags = { 'a.vcap': catalogFrames(20), 'b.vdb': catalogFrames(30, 7), 'day2/c.vcapx': catalogFrames(24, 13) };

describe('lake end to end: index, export, query', () => {
  test('counts, gaps and times from SQL equal what was written', async () => {
    const dir = join(root, 'bags');
    for (const [name, frames] of Object.entries(bags)) await writeCatalogBag(join(dir, name), frames);
    const catalog = join(root, 'catalog');
    const exported = join(root, 'export');
    const indexed = await indexBags([dir], catalog);
    assert.deepEqual([indexed.added, indexed.failed], [3, []]);
    const report = await exportMessages([catalog], exported);
    const total = Object.values(bags).reduce((n, frames) => n + frames.length, 0);
    assert.equal(report.messages, total);

    const lake = await openLake({ catalog, export: exported });
    try {
      const counts = await lake.query(
        'SELECT bag_id, url, count(*) AS n, sum(size) AS bytes FROM messages GROUP BY ALL ORDER BY ALL',
      );
      const expected = Object.entries(bags)
        .flatMap(([id, frames]) => [...writtenUrls(frames)].map(([url, u]) => [id, url, u.count, u.bytes]))
        .sort((x, y) => String(x[0]).localeCompare(String(y[0])) || String(x[1]).localeCompare(String(y[1])));
      assert.deepEqual(counts.rows, expected);

      // The catalog's url rows agree with the messages, bag by bag and url by url.
      const agree = await lake.query(
        `SELECT u.bag_id, u.url, u.message_count, count(m.seq) AS n, u.max_gap_us, u.gap_count
           FROM urls u LEFT JOIN messages m USING (bag_id, url)
          GROUP BY ALL ORDER BY ALL`,
      );
      for (const [id, url, catalogCount, n, maxGap, gaps] of agree.rows) {
        const written = writtenUrls(bags[id as keyof typeof bags]).get(url as string)!;
        assert.deepEqual(
          [catalogCount, n, maxGap, gaps],
          [written.count, written.count, written.maxGapUs, written.gaps],
        );
      }

      // "Every lidar gap over 200 ms": one 600 ms hole per bag, found from the message times.
      const holes = await lake.query(
        `SELECT bag_id, count(*) AS holes, max(gap) AS longest FROM (
           SELECT bag_id, epoch_us(log_time) - lag(epoch_us(log_time)) OVER (PARTITION BY bag_id ORDER BY log_time) AS gap
             FROM messages WHERE url = '/lidar')
         WHERE gap > 200000 GROUP BY bag_id ORDER BY bag_id`,
      );
      assert.deepEqual(holes.rows, [
        ['a.vcap', 1, 600_000],
        ['b.vdb', 1, 600_000],
        ['day2/c.vcapx', 1, 600_000],
      ]);

      // Log times are the recording start plus the pushed µs, exactly.
      const first = await lake.query(
        "SELECT epoch_us(min(log_time)) FROM messages WHERE bag_id = 'b.vdb' AND url = '/lidar'",
      );
      assert.deepEqual(first.rows, [[START_MS * 1000 + bags['b.vdb'][0]!.timestamp]]);
    } finally {
      lake.close();
    }
  });
});
