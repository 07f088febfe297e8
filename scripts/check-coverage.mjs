#!/usr/bin/env node
// Checks the coverage of the last Node run (c8's coverage/coverage-summary.json, written by `test-all.mjs node`)
// against the per-package floors in scripts/coverage-thresholds.json. Prints one line per package; exits 1 when a
// package is below a floor, or when a package has source but no floor (a new package must get one).
// Floors are set at the level measured when they were last raised: raise them as tests are added, never lower them
// to make a run pass. `--update` rewrites the file with today's figures rounded down to a whole percent.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const summaryPath = join(root, 'coverage', 'coverage-summary.json');
const thresholdsPath = join(root, 'scripts', 'coverage-thresholds.json');
const METRICS = ['lines', 'branches', 'functions', 'statements'];

if (!existsSync(summaryPath)) {
  console.error(`${relative(root, summaryPath)} is missing: run \`node scripts/test-all.mjs node\` first`);
  process.exit(1);
}
const summary = JSON.parse(readFileSync(summaryPath, 'utf8'));

/** Per package (the folder under packages/): covered and total counts for each metric. */
const perPackage = new Map();
for (const [file, counts] of Object.entries(summary)) {
  if (file === 'total') continue;
  const parts = relative(root, file).split(sep);
  if (parts[0] !== 'packages') continue;
  const name = parts[1];
  const entry = perPackage.get(name) ?? Object.fromEntries(METRICS.map((m) => [m, { covered: 0, total: 0 }]));
  for (const m of METRICS) {
    entry[m].covered += counts[m].covered;
    entry[m].total += counts[m].total;
  }
  perPackage.set(name, entry);
}
const pct = (c) => (c.total === 0 ? 100 : (100 * c.covered) / c.total);

const thresholds = existsSync(thresholdsPath) ? JSON.parse(readFileSync(thresholdsPath, 'utf8')) : {};
if (process.argv.includes('--update')) {
  const floors = {};
  for (const [name, entry] of [...perPackage].sort()) {
    floors[name] = Object.fromEntries(METRICS.map((m) => [m, Math.floor(pct(entry[m]))]));
  }
  writeFileSync(thresholdsPath, `${JSON.stringify(floors, null, 2)}\n`);
  console.log(`wrote ${relative(root, thresholdsPath)}`);
}

const floors = process.argv.includes('--update') ? JSON.parse(readFileSync(thresholdsPath, 'utf8')) : thresholds;
const problems = [];
console.log(`\ncoverage of the Node run, per package (floor in brackets):`);
for (const [name, entry] of [...perPackage].sort()) {
  const floor = floors[name];
  if (!floor) problems.push(`${name}: no floor in ${relative(root, thresholdsPath)}`);
  const cells = METRICS.map((m) => {
    const value = pct(entry[m]);
    if (floor && value < floor[m])
      problems.push(`${name}: ${m} ${value.toFixed(2)} % is below its floor ${floor[m]} %`);
    return `${m} ${value.toFixed(1).padStart(5)} %${floor ? ` [${floor[m]}]` : ''}`;
  });
  console.log(`  ${name.padEnd(15)} ${cells.join('  ')}`);
}
for (const name of Object.keys(floors)) {
  if (!perPackage.has(name)) problems.push(`${name}: has a floor but no coverage was measured`);
}
if (problems.length > 0) {
  console.error(`\ncoverage below its floors:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('coverage: every package at or above its floors');
