import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { AlignDescription } from '@vlink/bag-align';
import {
  ALIGN_FORMATS,
  type AlignBase,
  type AlignFormat,
  MATCH_POLICIES,
  type MatchPolicy,
  MISSING_POLICIES,
  type MissingPolicy,
} from '@vlink/bag-align/options';
import { stemOf } from '@vlink/bag-core/internal';
import { Option, type Command } from 'commander';
import { openBag, realPathOf } from '../lib/bag-io.js';
import { CliError, usageError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';
import { listOption } from '../lib/list-option.js';

interface AlignFlags {
  base: string;
  timeBase: 'log' | 'publish';
  match?: string[];
  defaultMatch: MatchPolicy;
  tolerance?: string;
  missing: MissingPolicy;
  format?: AlignFormat;
  output: string;
  force?: boolean;
  json?: boolean;
  quiet?: boolean;
}

/** `--base 30hz` / `--base 30` is a fixed rate; anything else is a url. */
export function parseBase(value: string): AlignBase {
  const rate = /^\s*(\d+(?:\.\d+)?)\s*(?:hz)?\s*$/i.exec(value);
  if (rate) return { rateHz: Number(rate[1]) };
  return { url: value };
}

/** `20ms`, `500us`, `0.02s` or `0.02` (seconds, as every CLI time) → µs. */
export function parseTolerance(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s)?\s*$/i.exec(value);
  if (!m) throw usageError(`--tolerance takes a duration (20ms, 500us, 0.02s), got ${JSON.stringify(value)}`);
  const scale = { us: 1, µs: 1, ms: 1000, s: 1e6 }[(m[2] ?? 's').toLowerCase() as 'us'] ?? 1e6;
  return Number(m[1]) * scale;
}

/** `--match /state=linear,/cam=nearest` → { url: policy }; a bare url takes `--default-match`. */
export function parseMatches(items: readonly string[], fallback: MatchPolicy): Record<string, MatchPolicy> {
  const out: Record<string, MatchPolicy> = {};
  for (const item of items) {
    const at = item.lastIndexOf('=');
    const url = at < 0 ? item : item.slice(0, at);
    const policy = at < 0 ? fallback : item.slice(at + 1);
    if (!(MATCH_POLICIES as readonly string[]).includes(policy)) {
      throw usageError(`--match ${item}: the policy must be one of ${MATCH_POLICIES.join(', ')}`);
    }
    out[url] = policy as MatchPolicy;
  }
  return out;
}

export function registerAlign(program: Command): void {
  const command = program
    .command('align')
    .description(
      "align a bag's urls onto one timeline (a url's messages or a fixed rate) and write the decoded fields as Parquet, CSV or NDJSON, one file per bag",
    )
    .argument('<bags...>', 'bags to align (one output file per bag)')
    .requiredOption('--base <url|rate>', 'the base timeline: a url (one row per message) or a rate (30hz)')
    .addOption(new Option('--time-base <base>', 'the times to align on').choices(['log', 'publish']).default('log'))
    .addOption(
      listOption(
        '--match <url=policy>',
        `urls to align and how (${MATCH_POLICIES.join(', ')}); default: every data url`,
      ),
    )
    .addOption(
      new Option('--default-match <policy>', 'the policy of urls without one')
        .choices(MATCH_POLICIES)
        .default('nearest'),
    )
    .option('--tolerance <duration>', 'the largest distance to a matched sample (20ms, 500us, 0.02s); default none')
    .addOption(
      new Option('--missing <policy>', 'a url without a sample in tolerance: drop the row, forward-fill, or null')
        .choices(MISSING_POLICIES)
        .default('null'),
    )
    .addOption(new Option('--format <format>', 'output format (default: from -o, else parquet)').choices(ALIGN_FORMATS))
    .requiredOption('-o, --output <path>', 'the output file (one bag) or directory (several bags)')
    .option('-f, --force', 'overwrite existing outputs')
    .option('--json', 'print the outputs and their row counts as JSON')
    .option('-q, --quiet', 'print nothing on success');
  command.action((bags: string[], flags: AlignFlags) => alignBags(bags, flags));
  examples(command, [
    'vlink-bag align session.vcap --base /camera/front --match /state=linear,/action=previous --tolerance 20ms -o session.parquet',
    'vlink-bag align session.vcap --base 50hz --time-base publish --missing ffill --format csv -o session.csv',
    'vlink-bag align ep1.vcap ep2.vcap --base /camera/front --missing drop -o dataset/',
  ]);
}

/** Where each bag's output goes: `-o` itself for one bag (unless it is a directory), else `<dir>/<stem>.<ext>`. */
function outputsFor(bags: readonly string[], output: string, format: AlignFormat): string[] {
  const isDir = existsSync(output) && statSync(output).isDirectory();
  if (bags.length === 1 && !isDir) return [output];
  if (!isDir) throw new CliError('is not a directory: several bags need an output directory', output);
  const outputs = bags.map((bag) => join(output, `${stemOf(basename(bag))}.${format}`));
  const seen = new Set<string>();
  for (const [i, out] of outputs.entries()) {
    if (seen.has(out)) throw new CliError(`two bags would write ${out}; align them into separate directories`, bags[i]);
    seen.add(out);
  }
  return outputs;
}

async function alignBags(bags: string[], flags: AlignFlags): Promise<void> {
  // Loaded here, not with the CLI: the aligner brings the payload decoder and the Parquet writer.
  const { alignToFile, descriptionPath, formatOfPath } = await import('@vlink/bag-align');
  const single = bags.length === 1 && !(existsSync(flags.output) && statSync(flags.output).isDirectory());
  const format = flags.format ?? (single ? formatOfPath(flags.output) : undefined) ?? 'parquet';
  const outputs = outputsFor(bags, flags.output, format);
  const sources = new Set(bags.map((b) => realPathOf(b)));
  for (const out of outputs) {
    if (sources.has(realPathOf(out))) throw new CliError('refusing to overwrite the source bag', out);
    if (!flags.force && (existsSync(out) || existsSync(descriptionPath(out)))) {
      throw new CliError('already exists (pass -f/--force to overwrite)', out);
    }
  }
  const options = {
    base: parseBase(flags.base),
    timeBase: flags.timeBase,
    match: parseMatches(flags.match ?? [], flags.defaultMatch),
    defaultMatch: flags.defaultMatch,
    missing: flags.missing,
    ...(flags.tolerance === undefined ? {} : { toleranceUs: parseTolerance(flags.tolerance) }),
  };
  const results: Array<{ bag: string; output: string; description: string; rows: number; droppedRows: number }> = [];
  for (const [i, bag] of bags.entries()) {
    const output = outputs[i]!;
    const reader = await openBag(bag);
    let description: AlignDescription;
    try {
      description = await alignToFile(reader, options, output, format);
    } finally {
      await reader.close();
    }
    results.push({
      bag,
      output: resolve(output),
      description: resolve(descriptionPath(output)),
      rows: description.rows,
      droppedRows: description.droppedRows,
    });
    if (!flags.json && !flags.quiet) report(bag, output, description);
  }
  if (flags.json) printJson({ outputs: results });
}

/** One line per output, and one per url for everything that was left out or could not be read, so none is silent. */
function report(bag: string, output: string, d: AlignDescription): void {
  const lines = [`${bag} → ${output}: ${d.rows} rows, ${d.droppedRows} dropped, ${d.columns.length} columns`];
  for (const [url, c] of Object.entries(d.urls)) {
    const notes = [
      c.missing > 0 ? `${c.missing} rows without a sample${c.filled > 0 ? ` (${c.filled} forward-filled)` : ''}` : '',
      c.decodeErrors > 0 ? `${c.decodeErrors} messages that did not decode` : '',
      c.late > 0 ? `${c.late} samples out of publish order beyond the reorder window, left out` : '',
      c.skippedActions > 0 ? `${c.skippedActions} RPC messages not aligned` : '',
      c.typeMismatches > 0 ? `${c.typeMismatches} values of another type than their column (null)` : '',
      Object.keys(c.unknownFields).length > 0
        ? `fields not in its first message, without a column: ${Object.keys(c.unknownFields).slice(0, 5).join(', ')}`
        : '',
    ].filter(Boolean);
    if (notes.length > 0) lines.push(`  ${url}: ${notes.join('; ')}`);
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}
