#!/usr/bin/env node
// SQL over a fleet (issue 24), results to bench/results/lake-query-<runtime>.json.
//
// A fleet of BAGS bags × MESSAGES messages (100 × 100k; --quick 100 × 10k; --smoke 10 × 2k): per bag a url /imu
// every 10 ms (80 % of its messages) and a url /lidar every 50 ms (20 %), 16-byte payloads. The same messages exist
// twice: as .vcap bags written by BagWriter, and in the lake the product makes of them: the catalog written by
// `indexBags` (`vlink-bag index`: bags.parquet, urls.parquet with one row per bag × url) and the message export
// written by `exportMessages` (`vlink-bag export --format parquet`: hive-partitioned Parquet, one row per message),
// both timed. One question, "messages and mean rate per url across the fleet", answered three ways, interleaved,
// medians:
//   export   DuckDB (`@vlink/bag-lake` openLake, locked down) aggregating every message row of the export
//   catalog  DuckDB answering from the catalog's url rows (no message is read)
//   loop     the baseline: a plain JS loop over every bag opened with BagReader, counting and min/max per url from
//            `reader.frames()` (what a user without the lake would write)
// The three answers are checked equal. Ratios are loop time / query time (above 1 = the query is faster).
//
//   node bench/lake-query.bench.mjs [--quick|--smoke]     bun …     deno run -A --node-modules-dir=manual bench/…
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ActionType, BagReader, BagWriter, SchemaType } from '../packages/bag/dist/index.js';
import { exportMessages, indexBags, openLake } from '../packages/lake/dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const BAGS = smoke ? 10 : 100;
const MESSAGES = smoke ? 2_000 : quick ? 10_000 : 100_000;
const IMU = MESSAGES * 0.8;
const LIDAR = MESSAGES * 0.2;
const REPEATS = smoke ? 1 : 3;
const START_MS = Date.UTC(2026, 11, 1);
const dir = mkdtempSync(join(tmpdir(), 'vlink-lake-bench-'));
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const payload = new Uint8Array(16).fill(0xab);

// bag i starts at START_MS + i hours; /imu message k at k × 10 ms, /lidar message k at k × 50 ms + 5 ms
const t0 = performance.now();
const bagFiles = [];
for (let i = 0; i < BAGS; i++) {
  const file = join(dir, 'bags', `run-${String(i).padStart(3, '0')}.vcap`);
  mkdirSync(dirname(file), { recursive: true });
  const writer = await BagWriter.create(file, { maxQueueTimeMs: 0, startTimestamp: START_MS + i * 3_600_000 });
  for (let k = 0, l = 0; k < IMU || l < LIDAR; ) {
    const imuAt = k < IMU ? k * 10_000 : Number.POSITIVE_INFINITY;
    const lidarAt = l < LIDAR ? l * 50_000 + 5_000 : Number.POSITIVE_INFINITY;
    const imu = imuAt <= lidarAt;
    await writer.write({
      timestamp: imu ? imuAt : lidarAt,
      url: imu ? '/imu' : '/lidar',
      data: payload,
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    if (imu) k++;
    else l++;
  }
  await writer.close();
  bagFiles.push(file);
}
const writeBagsS = (performance.now() - t0) / 1000;

const lake = { catalog: join(dir, 'catalog'), export: join(dir, 'export') };
const t1 = performance.now();
const indexed = await indexBags([join(dir, 'bags')], lake.catalog);
if (indexed.failed.length > 0) throw new Error(`index failed: ${JSON.stringify(indexed.failed)}`);
const indexS = (performance.now() - t1) / 1000;
const t2 = performance.now();
const exported = await exportMessages(bagFiles, lake.export);
if (exported.messages !== BAGS * MESSAGES)
  throw new Error(`exported ${exported.messages} of ${BAGS * MESSAGES} messages`);
const exportS = (performance.now() - t2) / 1000;

const EXPORT_SQL = `SELECT url, sum(n) AS messages, avg(rate) AS mean_rate FROM (
    SELECT bag_id, url, count(*) AS n, (count(*) - 1) / ((epoch_us(max(log_time)) - epoch_us(min(log_time))) / 1e6) AS rate
    FROM messages GROUP BY bag_id, url) GROUP BY url ORDER BY url`;
const CATALOG_SQL =
  'SELECT url, sum(message_count) AS messages, avg(rate_hz) AS mean_rate FROM urls GROUP BY url ORDER BY url';

const opened = await openLake(lake);
async function viaLake(sql) {
  const started = performance.now();
  const result = await opened.query(sql);
  return { ms: performance.now() - started, answer: result.rows };
}

async function viaLoop() {
  const started = performance.now();
  const perUrl = new Map();
  for (const file of bagFiles) {
    const reader = await BagReader.create(file);
    const stats = new Map();
    for await (const frame of reader.frames()) {
      const s = stats.get(frame.url);
      if (s === undefined) stats.set(frame.url, { n: 1, min: frame.timestamp, max: frame.timestamp });
      else {
        s.n++;
        if (frame.timestamp < s.min) s.min = frame.timestamp;
        if (frame.timestamp > s.max) s.max = frame.timestamp;
      }
    }
    await reader.close();
    for (const [url, s] of stats) {
      const rate = (s.n - 1) / (Number(s.max - s.min) / 1e6);
      const u = perUrl.get(url) ?? { messages: 0, rates: [] };
      u.messages += s.n;
      u.rates.push(rate);
      perUrl.set(url, u);
    }
  }
  const answer = [...perUrl]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([url, u]) => [url, u.messages, u.rates.reduce((a, b) => a + b, 0) / u.rates.length]);
  return { ms: performance.now() - started, answer };
}

const runs = { export: [], catalog: [], loop: [] };
for (let r = 0; r < REPEATS; r++) {
  runs.loop.push(await viaLoop());
  runs.export.push(await viaLake(EXPORT_SQL));
  runs.catalog.push(await viaLake(CATALOG_SQL));
}
opened.close();

// the three answers must agree (rates to 1e-9 relative: float sums in different orders)
const reference = runs.loop[0].answer;
for (const [name, list] of Object.entries(runs)) {
  const answer = list[0].answer;
  const same =
    answer.length === reference.length &&
    answer.every(
      (row, i) =>
        row[0] === reference[i][0] &&
        row[1] === reference[i][1] &&
        Math.abs(row[2] - reference[i][2]) <= 1e-9 * Math.abs(reference[i][2]),
    );
  if (!same) throw new Error(`${name} answered ${JSON.stringify(answer)}, the loop ${JSON.stringify(reference)}`);
}

const loopMs = median(runs.loop.map((x) => x.ms));
const cases = ['export', 'catalog'].map((name) => {
  const ms = median(runs[name].map((x) => x.ms));
  return { name, ms: round(ms, 1), ratioToLoop: round(loopMs / ms, 2) };
});
const total = BAGS * MESSAGES;
const out = {
  date: new Date().toISOString(),
  runtime,
  runtimeVersion,
  quick,
  smoke,
  fleet: {
    bags: BAGS,
    messagesPerBag: MESSAGES,
    messages: total,
    writeBagsS: round(writeBagsS, 1),
    indexS: round(indexS, 1),
    exportS: round(exportS, 1),
    exportFiles: exported.files,
    exportMiB: round(exported.bytes / 2 ** 20, 1),
  },
  question: 'messages and mean rate per url across the fleet',
  answer: reference,
  contenders: {
    export:
      'DuckDB (`openLake`, locked down) over the message export `exportMessages` wrote: a GROUP BY of every message row',
    catalog: 'DuckDB over the url rows of the catalog `indexBags` wrote (urls.parquet): no message read',
    loop: 'a plain JS loop: `BagReader.create` + `reader.frames()` of every .vcap bag, count and min/max per url',
  },
  loop: { ms: round(loopMs, 1), messagesPerS: round(total / (loopMs / 1000), 0) },
  cases: cases.map((c) => ({ ...c, messagesPerS: c.name === 'export' ? round(total / (c.ms / 1000), 0) : undefined })),
};
for (const c of out.cases) {
  console.log(
    `${c.name}: ${c.ms} ms (${c.ratioToLoop}× the BagReader loop at ${out.loop.ms} ms) for ${total} messages in ${BAGS} bags`,
  );
}
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `lake-query-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
