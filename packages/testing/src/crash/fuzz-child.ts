/**
 * Runs fuzz cases [start, start + count) of one format and seed in this process, printing `S <i>` before and
 * `E <i> <json>` after each case (then `D`), so the parent's watchdog knows which case hung or crashed the process.
 *
 * Usage: fuzz-child <format> <seed> <start> <count> <work dir>
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildBases, makeCase, runCase, type FuzzFormat } from './fuzz.js';

const [format, seedArg, startArg, countArg, dir] = process.argv.slice(2);
if (!format || !dir) {
  process.stderr.write('usage: fuzz-child <format> <seed> <start> <count> <work dir>\n');
  process.exit(2);
}
const seed = Number(seedArg);
const start = Number(startArg);
const count = Number(countArg);
mkdirSync(dir, { recursive: true });
const bases = await buildBases(format as FuzzFormat, join(dir, 'bases'));
const out = (line: string) => process.stdout.write(`${line}\n`);
out(`B ${bases.length}`);
for (let i = start; i < start + count; i++) {
  const fuzzCase = makeCase(bases, seed, i);
  out(`S ${i}`);
  const outcome = await runCase(fuzzCase, join(dir, 'case'));
  out(
    `E ${i} ${JSON.stringify({ ...outcome, base: fuzzCase.base, target: fuzzCase.target, mutation: fuzzCase.mutation })}`,
  );
}
out('D');
