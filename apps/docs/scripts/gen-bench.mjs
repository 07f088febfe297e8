// performance.md from the benchmark results the bench scripts write (bench/results/*.json), plus BENCHMARKS.md at the
// repo root when it exists. The result files differ in shape (each bench records what it measures), so they are
// rendered generically: run facts (runtime, date, load) first, then every section as a table. Arrays of results
// become one column per run configuration; {median, best, all} triples print as "median (best …)".
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { cell, fromDocs, fromRoot, generatedBy, table, writeIfChanged } from './lib.mjs';

const SCRIPT = 'gen-bench.mjs';
const META = [
  'runtime',
  'runtimeVersion',
  'version',
  'bench',
  'driver',
  'backend',
  'date',
  'quick',
  'reps',
  'cpus',
  'machine',
  'loadAverage',
  'loadAverageAtStart',
  'loadAverageAtEnd',
  'scheduling',
  'python',
  'implementation',
  'platform',
  'server',
  'packages',
];

// Which README explains each bench (the prose, the goals, the caveats of the machine).
const EXPLAINED = {
  http: ['@vlink/bag-server', 'packages/http-api/README.md'],
  interop: ['@vlink/bag-interop', 'packages/backend-interop/README.md'],
  lzav: ['@vlink/bag-core codecs', 'packages/core/README.md'],
  playback: ['@vlink/bag-core playback', 'packages/core/README.md'],
  python: ['the Python client', 'clients/python/README.md'],
  vcap: ['@vlink/bag-mcap', 'packages/backend-mcap/README.md'],
  vdb: ['@vlink/bag-sqlite', 'packages/backend-sqlite/README.md'],
  writer: ['@vlink/bag-core writer', 'packages/core/README.md'],
};

const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isTriple = (v) => isPlain(v) && 'median' in v && 'best' in v;

function number(n) {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  const digits = abs >= 1000 || Number.isInteger(n) ? 0 : abs >= 100 ? 1 : abs >= 1 ? 2 : 3;
  // Thin no-break spaces group the thousands: a table cell never wraps inside a number.
  return n.toLocaleString('en-US', { maximumFractionDigits: digits }).replace(/,/g, '\u202f');
}

function scalar(v) {
  if (typeof v === 'number') return number(v);
  if (typeof v === 'boolean') return v ? '✓' : '✗';
  if (v === null || v === undefined) return '—';
  if (Array.isArray(v))
    return v.every((x) => typeof x !== 'object') && v.length <= 6 ? v.map(scalar).join(', ') : `${v.length} values`;
  if (isTriple(v)) return `${scalar(v.median)} (best ${scalar(v.best)})`;
  return cell(String(v));
}

/** Flattens an object into [path, display] leaves; triples and short scalar arrays stay one leaf; long arrays drop. */
function leaves(value, prefix = '') {
  const out = [];
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isTriple(v) || !isPlain(v)) {
      if (Array.isArray(v) && (v.length > 6 || v.some((x) => typeof x === 'object'))) continue;
      out.push([path, scalar(v)]);
    } else out.push(...leaves(v, path));
  }
  return out;
}

/** A label per array item: its top-level scalars that differ between items (payload size, compression, mode…). */
function labels(items) {
  const keys = Object.keys(items[0] ?? {}).filter((k) => items.every((it) => !isPlain(it[k]) && !Array.isArray(it[k])));
  const varying = keys.filter((k) => new Set(items.map((it) => JSON.stringify(it[k]))).size > 1).slice(0, 3);
  return {
    keys: varying,
    names: items.map((it, i) =>
      varying.length ? varying.map((k) => `${k} ${scalar(it[k])}`).join(', ') : `#${i + 1}`,
    ),
  };
}

function renderArray(title, items, depth) {
  const objects = items.filter(isPlain);
  if (objects.length === 0) return [`${'#'.repeat(depth)} ${title}`, '', scalar(items), ''];
  const { keys, names } = labels(objects);
  const rows = new Map();
  objects.forEach((item, column) => {
    for (const [path, display] of leaves(item)) {
      if (keys.includes(path)) continue;
      if (!rows.has(path)) rows.set(path, new Array(objects.length).fill(''));
      rows.get(path)[column] = display;
    }
  });
  // Many configurations: one row per configuration reads better than a very wide table.
  if (objects.length > 8) {
    const paths = [...rows.keys()];
    return [
      `${'#'.repeat(depth)} ${title}`,
      '',
      table(
        ['', ...paths.map((p) => `\`${p}\``)],
        names.map((n, c) => [n, ...paths.map((p) => rows.get(p)[c])]),
      ),
      '',
    ];
  }
  return [
    `${'#'.repeat(depth)} ${title}`,
    '',
    table(
      ['', ...names],
      [...rows].map(([path, values]) => [`\`${path}\``, ...values]),
    ),
    '',
  ];
}

function renderSection(title, value, depth) {
  if (Array.isArray(value)) return renderArray(title, value, depth);
  const direct = [];
  const nested = [];
  for (const [key, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.some(isPlain)) nested.push([key, v]);
    else if (isPlain(v) && !isTriple(v) && Object.values(v).some((x) => Array.isArray(x) && x.some(isPlain)))
      nested.push([key, v]);
    else direct.push([key, v]);
  }
  const out = [`${'#'.repeat(depth)} ${title}`, ''];
  const flat = direct.flatMap(([key, v]) => (isPlain(v) && !isTriple(v) ? leaves(v, key) : [[key, scalar(v)]]));
  if (flat.length > 0)
    out.push(
      table(
        ['Measure', 'Value'],
        flat.map(([path, display]) => [`\`${path}\``, display]),
      ),
      '',
    );
  for (const [key, v] of nested) out.push(...renderSection(key, v, Math.min(depth + 1, 6)));
  return out;
}

function runFacts(result) {
  const facts = [];
  for (const key of META) {
    if (!(key in result)) continue;
    const v = result[key];
    facts.push(
      `${key} ${
        isPlain(v)
          ? Object.entries(v)
              .map(([k, x]) => `${k} ${scalar(x)}`)
              .join(', ')
          : scalar(v)
      }`,
    );
  }
  return facts.join(' · ');
}

function renderFile(file) {
  const name = basename(file, '.json');
  const result = JSON.parse(readFileSync(file, 'utf8'));
  const family = name.split('-')[0];
  const [what, readme] = EXPLAINED[family] ?? [];
  const out = [`### \`${name}.json\``, ''];
  if (readme) out.push(`Explained in the README of ${what} (\`${readme}\`).`, '');
  // lzav.json nests one result per runtime; the others are one run each.
  const runs = Object.values(result).every((v) => isPlain(v) && ('runtime' in v || 'rows' in v))
    ? Object.entries(result)
    : [[null, result]];
  for (const [runtime, run] of runs) {
    if (runtime) out.push(`#### ${runtime}`, '');
    out.push(`Run: ${runFacts(run) || 'no run facts recorded'}`, '');
    const body = Object.fromEntries(Object.entries(run).filter(([k]) => !META.includes(k)));
    out.push(...renderSection(runtime ? 'Results' : 'Results', body, runtime ? 5 : 4).slice(2));
  }
  return out;
}

// The headline numbers, picked from the result files by path; a row whose files or fields are missing is left out,
// so a bench that changes its output shape only loses its headline, never the build.
const find = (items, match) =>
  Array.isArray(items) ? items.find((it) => Object.entries(match).every(([k, v]) => it[k] === v)) : undefined;
const HEADLINES = [
  [
    '`.vcap` write ÷ `@mcap/core` McapWriter, 1 MiB frames (×)',
    'vcap',
    (r) => find(r.results, { size: 1048576, compress: 'none' })?.ratios?.oursWriteVsMcapWriter,
  ],
  [
    '`.vcap` write ÷ McapWriter, 64 B frames (×)',
    'vcap',
    (r) => find(r.results, { size: 64, compress: 'none' })?.ratios?.oursWriteVsMcapWriter,
  ],
  [
    '`.vcap` read ÷ `@mcap/core` McapIndexedReader, 64 B frames (×)',
    'vcap',
    (r) => find(r.results, { size: 64, compress: 'none' })?.ratios?.oursReadVsMcapIndexedReader,
  ],
  [
    '`.vdb` write ÷ raw SQLite loop, 64 B, CPU (1.0 = as fast)',
    'vdb',
    (r) => find(r.results, { payload: 64, lzav: false })?.cpuRatio?.write,
  ],
  [
    '`.vdb` read ÷ raw SQLite loop, 64 B, CPU',
    'vdb',
    (r) => find(r.results, { payload: 64, lzav: false })?.cpuRatio?.read,
  ],
  ['Playback pacing error p99 (ms)', 'playback', (r) => r.pacing?.errorMs?.p99],
  ['HTTP NDJSON stream, 64 B frames (msg/s)', 'http', (r) => r.smallFrames?.ndjsonMsgPerS?.median],
  ['HTTP binary stream, 1 MiB frames, `.vcap` (MiB/s)', 'http', (r) => r.bigFrames?.binaryStreamVcapMiBPerS?.median],
  [
    'Python `read_messages`, 64 B frames, `.vcap` (msg/s; server on Node)',
    'python',
    (r) => r.smallFrames?.readMessagesVcap?.msgPerS,
  ],
  ['Python local read, 64 B frames, `.vcap` (msg/s)', 'python', (r) => r.smallFrames?.localVcap?.msgPerS],
  ['Python local read, 64 B frames, `.vdb` (msg/s)', 'python', (r) => r.smallFrames?.localVdb?.msgPerS],
  [
    'Python `to_dataframe(decode=True)`, 64 B frames, `.vcap` (msg/s; server on Node)',
    'python',
    (r) => r.smallFrames?.dataframeRemoteVcap?.msgPerS,
  ],
];

function headlines(dir, files) {
  let anyQuick = false;
  const load = (name) =>
    files.includes(`${name}.json`) ? JSON.parse(readFileSync(`${dir}/${name}.json`, 'utf8')) : undefined;
  const value = (family, runtime, pick) => {
    const result = load(runtime ? `${family}-${runtime}` : family);
    try {
      const v = result && pick(result);
      if (typeof v !== 'number') return '';
      const quick = result.quick === true || result.mode === 'quick';
      if (quick) anyQuick = true;
      return quick ? `${number(v)} (quick)` : number(v);
    } catch {
      return '';
    }
  };
  const rows = HEADLINES.map(([label, family, pick]) =>
    family === 'python'
      ? [label, value(family, null, pick), '']
      : [label, value(family, 'node', pick), value(family, 'bun', pick)],
  ).filter(([, a, b]) => a || b);
  if (rows.length === 0) return [];
  return [
    '## Headlines',
    '',
    'Medians from the result files below; runtime versions, dates and machine load are in the run line of each file.',
    '',
    table(['', 'Node', 'Bun'], rows),
    '',
    ...(anyQuick ? ['"(quick)": from a `--quick` run, shorter and noisier than a full one.', ''] : []),
  ];
}

/** bench/run.mjs's log (`run.json`: which bench ran when, in which mode, under what load): a table, not results. */
const isRunLog = (result) => isPlain(result?.entries) && Array.isArray(result?.runs);
function renderRunLog(result) {
  const rows = Object.entries(result.entries).map(([name, e]) => [
    `\`${name}\``,
    cell(e.status ?? ''),
    cell(e.mode ?? ''),
    cell(e.startedAt ?? ''),
    e.seconds === undefined ? '' : number(e.seconds),
    Array.isArray(e.load?.loadAvgStart) ? number(e.load.loadAvgStart[0]) : '',
    e.load?.othersCores?.mean === undefined ? '' : number(e.load.othersCores.mean),
  ]);
  return [
    '## How these results were produced',
    '',
    `\`bench/results/run.json\`, the log of \`bench/run.mjs\`: every bench section, its mode (\`quick\` runs are shorter and`,
    'noisier), when it ran and how busy the machine was (1-minute load average at its start; cores used by other',
    'processes on average).',
    '',
    table(['Bench', 'Status', 'Mode', 'Started', 'Seconds', 'Load', 'Cores used by others'], rows),
    '',
  ];
}

/** Where repo-relative links in BENCHMARKS.md point on the site (the repository URL of the package manifests). */
const REPO_BLOB = 'https://github.com/vlink-bag/vlink-bag/blob/main/';

export async function generate() {
  const dir = fromRoot('bench/results');
  const all = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  const logs = all.filter((f) => isRunLog(JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'))));
  const files = all.filter((f) => !logs.includes(f));
  const benchmarksMd = fromRoot('BENCHMARKS.md');
  const lines = [
    '---',
    'outline: [2, 3]',
    '---',
    '',
    generatedBy(SCRIPT, `\`bench/results/*.json\`${existsSync(benchmarksMd) ? ' and `BENCHMARKS.md`' : ''}`),
    '',
    '# Performance',
    '',
    'Measured by the benchmarks in `bench/` (`npm run bench`, or `npm run bench:quick`), which run our code side by side',
    "with a baseline: `@mcap/core`'s writer and indexed reader, the raw SQLite driver loop, plain `fs` writes, a raw",
    'loopback socket, the official `mcap` Python reader. The runs below were made on a shared 2-core VM with other',
    'work running, so read the **ratios** to the baseline more than the absolute numbers; each package README explains',
    'its numbers, goals and caveats.',
    '',
  ];
  if (existsSync(benchmarksMd)) {
    // BENCHMARKS.md links files relative to the repo root (bench/README.md, …); on the site those would be dead links.
    const summary = readFileSync(benchmarksMd, 'utf8')
      .replace(/^# .*\n/, '')
      .replace(/\]\((?!https?:|#|\/)(?:\.\/)?([^)]+)\)/g, `](${REPO_BLOB}$1)`)
      .trim();
    lines.push('## Summary', '', summary, '');
  }
  lines.push(...headlines(dir, files));
  lines.push(
    '## Recorded results',
    '',
    files.length === 0
      ? 'No results recorded yet: run `npm run bench`.'
      : `${files.length} result files, as the last runs left them.`,
    '',
  );
  for (const file of files) lines.push(...renderFile(`${dir}/${file}`));
  for (const file of logs) lines.push(...renderRunLog(JSON.parse(readFileSync(`${dir}/${file}`, 'utf8'))));
  writeIfChanged(fromDocs('performance.md'), lines.join('\n'));
  return `${files.length} result files${logs.length ? ` + ${logs.length} run log` : ''}${existsSync(benchmarksMd) ? ' + BENCHMARKS.md' : ''}`;
}
