import { InvalidArgumentError, Option, type Command } from 'commander';
import { analyzeReport, type BagReport, type Histogram, type ReportOptions } from '@vlink/bag';
import { openBag } from '../lib/bag-io.js';
import { examples } from '../lib/filter-flags.js';
import { formatFreq, table } from '../lib/format.js';
import { printJson } from '../lib/json-schemas.js';
import { splitList } from '../lib/list-option.js';
import { parsePositive } from '../lib/parse.js';

interface ReportFlags {
  group?: string[][];
  bins?: number;
  tolerance?: number;
  json?: boolean;
}

/** Each `--group` occurrence is one group (its urls comma-separated), unlike list flags that merge occurrences. */
function collectGroup(value: string, previous: string[][] | undefined): string[][] {
  return [...(previous ?? []), splitList(value, undefined)];
}

export function registerReport(program: Command): void {
  const command = program
    .command('report')
    .description(
      'validation report: per url and action the frequency, interval histogram, time semantics and latency; ' +
        'publish-time offsets of urls meant to be simultaneous; the counters by cause',
    )
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx, .mcap, …)')
    .addOption(
      new Option(
        '--group <urls>',
        'urls meant to be simultaneous, comma-separated, the first the reference (repeat for more groups; ' +
          'default: urls that share publish times)',
      ).argParser(collectGroup),
    )
    .addOption(
      new Option('--bins <n>', 'histogram bins (default 30)').argParser((value) => {
        const n = parsePositive(value);
        if (!Number.isInteger(n)) throw new InvalidArgumentError('must be an integer');
        return n;
      }),
    )
    .addOption(
      new Option(
        '--tolerance <us>',
        "offset within which a member's message matches the reference (µs; default half the reference's period)",
      ).argParser(parsePositive),
    )
    .option('--json', 'print the report (JSON Schema in the CLI reference) and nothing else')
    .action(async (path: string, flags: ReportFlags) => {
      const reader = await openBag(path);
      try {
        const options: ReportOptions = {};
        if (flags.group) options.groups = flags.group;
        if (flags.bins !== undefined) options.bins = flags.bins;
        if (flags.tolerance !== undefined) options.toleranceUs = flags.tolerance;
        const report = await analyzeReport(reader, options);
        if (flags.json) printJson(report);
        else process.stdout.write(`${reportLines(report).join('\n')}\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, [
    'vlink-bag report /tmp/teleop.vcap',
    'vlink-bag report /tmp/teleop.vcap --group /cam/left,/cam/right --json',
    'vlink-bag report /tmp/bag.vdb --bins 60',
  ]);
}

const ms = (us: number | undefined) => (us === undefined ? '-' : `${(us / 1000).toFixed(3)}ms`);
const BARS = ' ▁▂▃▄▅▆▇█';

/** A histogram as one line of block characters (the height of each bin relative to the fullest). */
export function sparkline(h: Histogram): string {
  const top = Math.max(1, ...h.counts);
  return h.counts.map((n) => BARS[n === 0 ? 0 : Math.max(1, Math.round((n / top) * 8))]).join('');
}

/** The report as text: a stream table with interval histograms, the offset groups and the counters. */
export function reportLines(report: BagReport): string[] {
  const lines = [`Report: ${report.path} (${report.format}, ${report.messageCount} messages)`, '', 'Streams:'];
  const rows = [['[Url]', '[Action]', '[Count]', '[Rate]', '[P50]', '[P99]', '[Max]', '[Time]', '[Latency P50]']];
  for (const s of report.streams)
    rows.push([
      s.url,
      s.action,
      String(s.count),
      formatFreq(s.rateHz),
      ms(s.intervalUs?.p50),
      ms(s.intervalUs?.p99),
      ms(s.intervalUs?.max),
      s.time,
      ms(s.latencyUs?.p50),
    ]);
  lines.push(...table(rows, '  ').map((row) => `  ${row}`));
  lines.push('', 'Interval histograms (0 … 3 × median; > beyond):');
  for (const s of report.streams)
    if (s.intervalHistogram)
      lines.push(`  ${s.url} ${s.action}  |${sparkline(s.intervalHistogram)}|  >${s.intervalHistogram.over}`);
  if (report.groups.length > 0) {
    lines.push('', 'Publish-time offsets (member − nearest reference):');
    for (const g of report.groups) {
      lines.push(`  group (${g.source}) reference ${g.reference}, tolerance ${ms(g.toleranceUs)}`);
      for (const m of g.members)
        lines.push(
          `    ${m.url}  matched ${m.matched} (exact ${m.exact}), unmatched ${m.unmatched}, ` +
            `offset p50 ${ms(m.offsetUs?.p50)} min ${ms(m.offsetUs?.min)} max ${ms(m.offsetUs?.max)}` +
            (m.offsetHistogram ? `  |${sparkline(m.offsetHistogram)}|` : ''),
        );
    }
  }
  const counters = Object.entries(report.counters).flatMap(([url, causes]) =>
    Object.entries(causes).map(([cause, n]) => [String(n), cause, url]),
  );
  if (counters.length > 0) {
    lines.push('', 'Counters by cause:');
    lines.push(...table([['[Count]', '[Cause]', '[Url]'], ...counters], '  ').map((row) => `  ${row}`));
  }
  for (const error of report.errors) lines.push(`error: ${error}`);
  return lines;
}
