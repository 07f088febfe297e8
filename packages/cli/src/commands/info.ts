import { Option, type Command } from 'commander';
import {
  DEFAULT_GAP_FACTOR,
  actionText,
  analyzeTiming,
  infoProblems,
  summarizeBag,
  type BagReader,
  type Info,
  type UrlTiming,
} from '@vlink/bag';
import { openBag } from '../lib/bag-io.js';
import { addRecoveryOption, type RecoveryFlags, recoveryReaderOptions } from '../lib/recovery-flag.js';
import { examples } from '../lib/filter-flags.js';
import {
  displayWidth,
  formatDuration,
  formatFreq,
  formatLoss,
  formatSeconds,
  formatSize,
  formatTimezone,
  table,
} from '../lib/format.js';
import { exitQuietlyOnEpipe, LineOutput } from '../lib/output.js';
import { printJson } from '../lib/json-schemas.js';
import { parsePositive } from '../lib/parse.js';
import { formatWallTime } from '../lib/wall-time.js';
import { cursorFrames } from '../lib/read.js';

interface InfoFlags extends RecoveryFlags {
  list?: boolean;
  detail?: boolean;
  json?: boolean;
  gaps?: number | true;
  localTime?: boolean;
  utcTime?: boolean;
}

/** `--gaps` alone arrives as `--gaps=` (see aliases.ts): the default factor. */
function parseGapFactor(value: string): number | true {
  return value.trim() === '' ? true : parsePositive(value);
}

export function registerInfo(program: Command): void {
  const command = program
    .command('info')
    .description('print the summary of a bag: header, duration, counts and the per-url table')
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .addOption(
      new Option('-l, --list', 'list every frame (time, url, action, size) instead of the summary').conflicts('json'),
    )
    .addOption(new Option('--detail', "VLink's -l/--detail: the same frame list as -l").conflicts('json'))
    .option('--json', 'print the Info object (camelCase) as JSON and nothing else')
    .addOption(
      new Option(
        '--gaps [factor]',
        `add a timing analysis: per-url intervals and gaps longer than factor × the median (default ${DEFAULT_GAP_FACTOR}; a factor only as --gaps=<factor>)`,
      ).argParser(parseGapFactor),
    )
    .option('--local-time', 'show times as local wall-clock datetimes (Date Time line, -l list)')
    .addOption(
      new Option('--utc-time', 'show times as UTC datetimes (Date Time line, -l list)').conflicts('localTime'),
    );
  addRecoveryOption(command).action(async (path: string, flags: InfoFlags) => {
    const reader = await openBag(path, recoveryReaderOptions(flags));
    try {
      const info = reader.getInfo();
      const factor = flags.gaps === undefined ? undefined : flags.gaps === true ? DEFAULT_GAP_FACTOR : flags.gaps;
      const timing = factor === undefined ? undefined : { factor, urls: await analyzeTiming(reader, { factor }) };
      if (flags.json) {
        // The same document as the sidecar summary written beside a recording, for any bag.
        const document = await summarizeBag(reader);
        printJson(timing ? { ...document, timing } : document);
        return;
      }
      const utc = flags.utcTime === true;
      const wall = flags.localTime || flags.utcTime ? (ms: number) => formatWallTime(ms, utc) : undefined;
      if (flags.list || flags.detail) {
        await listFrames(reader, info, wall);
        return;
      }
      const lines = summary(info);
      if (wall) {
        const at = lines.findIndex((line) => line.startsWith('Date Time:'));
        if (at >= 0) lines[at] = `${'Date Time:'.padEnd(15)}${wall(info.startTimestamp)}`;
      }
      if (timing) lines.push('', ...timingLines(timing));
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      reader.close();
    }
  });
  examples(command, [
    'vlink-bag info /tmp/bag.vdb',
    'vlink-bag info /tmp/bag.vcap --json',
    'vlink-bag info /tmp/bag.vdb -l | head',
    'vlink-bag info /tmp/bag.vdb --gaps=5',
    'vlink-bag info /tmp/bag.vdb -l --utc-time',
  ]);
}

/** The summary, laid out like VLink's `vlink-bag info`. */
export function summary(info: Info): string[] {
  const lines: string[] = [];
  const field = (name: string, value: string) => lines.push(`${(`${name}:`).padEnd(15)}${value}`);
  field('File Name', info.path);
  field(
    'File Size',
    formatSize(info.fileSize) + (info.totalRawSize > 0 ? ` (Raw: ${formatSize(info.totalRawSize)})` : ''),
  );
  field('Tag Name', info.tagName);
  field('Version', info.version);
  field('Storage Type', `${info.storageType} (${info.format})`);
  const compressed = info.compressionType !== '' && info.compressionType.toLowerCase() !== 'none';
  const ratio =
    compressed && info.totalRawSize > 0
      ? ` (Ratio: ${Math.round((100 * Math.min(info.fileSize, info.totalRawSize)) / info.totalRawSize)}%)`
      : '';
  field('Compression', (info.compressionType || 'None') + ratio);
  field('Process Name', info.processName);
  const flags = [info.hasCompleted ? 'completed' : 'incomplete', ...(info.hasSchema ? ['schema'] : [])];
  field('Meta Flags', flags.join(' | '));
  field('Date Time', `${info.dateTime} (${formatTimezone(info.timezone)})`);
  field('Duration', `${formatDuration(info.blankDuration)} ~ ${formatDuration(info.totalDuration)}`);
  field('Message Count', String(info.messageCount));
  // Split recordings, and foreign bags kept in several files (a rosbag2 folder of `_0.db3`, `_1.db3`, …).
  if ((info.format.endsWith('x') && info.splitCount > 0) || info.splitCount > 1) {
    const by =
      info.splitByTime > 0
        ? ` (By time: ${(info.splitByTime / 1000).toFixed(2)}s)`
        : info.splitBySize > 0
          ? ` (By size: ${(info.splitBySize / 1024 ** 3).toFixed(2)}GB)`
          : '';
    field('Split Count', `${info.splitCount}${by}`);
  } else {
    field('Split Count', '---');
  }
  const withAction = info.urls.some((meta) => meta.action !== undefined);
  const precise = info.urls.some((meta) => meta.loss > 0 && meta.loss < 0.0001);
  const header = [
    '[Type]',
    ...(withAction ? ['[Action]'] : []),
    '[Count]',
    '[Size]',
    '[Freq]',
    '[Loss]',
    '[Url]',
    '[Ser]',
  ];
  const rows = info.urls.map((meta) => [
    meta.type,
    ...(withAction ? [meta.action ?? ''] : []),
    meta.count === 0 ? 'Unknown' : String(meta.count),
    meta.size === 0 ? 'Unknown' : formatSize(meta.size),
    formatFreq(meta.freq),
    formatLoss(meta.loss, precise),
    meta.url,
    meta.ser,
  ]);
  const [first, ...rest] = table([header, ...rows]);
  lines.push(`${'Meta List:'.padEnd(15)}${first}`);
  lines.push(...rest.map((row) => ' '.repeat(15) + row));
  // Counters by cause as the file recorded them (beyond VLink): frames the writer could not store, and causes the
  // application counted with writer.count().
  const dropped = Object.entries(info.counters ?? {}).flatMap(([url, causes]) =>
    Object.entries(causes).map(([cause, n]) => [String(n), cause, url]),
  );
  if (dropped.length > 0) {
    const [head, ...more] = table([['[Count]', '[Cause]', '[Url]'], ...dropped]);
    lines.push(`${'Counters:'.padEnd(15)}${head}`);
    lines.push(...more.map((row) => ' '.repeat(15) + row));
  }
  // What a reader read around, or why the bag is not complete (`infoProblems`: a tryToFix read of a damaged file, an
  // unfinished `.mcap`): shown here so that a recovered or unfinished bag never looks whole.
  for (const [i, problem] of infoProblems(info).entries())
    lines.push(`${(i === 0 ? 'Problems:' : '').padEnd(15)}${problem}`);
  // Definitions the bag lacks, taken from a distro's standard set (ROS 2 before Iron): decoded values rest on them.
  const borrowed = info.metadata?.find((m) => m.name === 'rosbag2.standard_definitions')?.values;
  if (borrowed)
    lines.push(
      `${'Definitions:'.padEnd(15)}not in the bag, ${borrowed['distro']}'s from ${borrowed['source']}: ${borrowed['types']?.split(',').join(', ')}`,
    );
  return lines;
}

function timingLines(report: { factor: number; urls: UrlTiming[] }): string[] {
  const lines = [`Timing (gaps > ${report.factor} × median interval):`];
  const ms = (us: number | undefined) => (us === undefined ? '-' : `${(us / 1000).toFixed(3)}ms`);
  const rows = [['[Url]', '[Action]', '[Count]', '[Rate]', '[Min]', '[P50]', '[P99]', '[Max]', '[Gaps]']];
  for (const url of report.urls) {
    const i = url.intervalUs;
    rows.push([
      url.url,
      url.action ?? '-',
      String(url.count),
      formatFreq(url.rateHz),
      ms(i?.min),
      ms(i?.p50),
      ms(i?.p99),
      ms(i?.max),
      String(url.gaps.length),
    ]);
  }
  lines.push(...table(rows, '  '));
  for (const url of report.urls) {
    for (const gap of url.gaps.slice(0, 20)) {
      lines.push(`  gap  ${url.url} ${url.action ?? '-'}  at ${formatSeconds(gap.startUs)}  for ${ms(gap.lengthUs)}`);
    }
    if (url.gaps.length > 20) lines.push(`  gap  ${url.url} ${url.action ?? '-'}  … ${url.gaps.length - 20} more`);
  }
  return lines;
}

async function listFrames(reader: BagReader, info: Info, wall: ((ms: number) => string) | undefined): Promise<void> {
  exitQuietlyOnEpipe();
  const out = new LineOutput();
  const urlWidth = Math.max(10, ...info.urls.map((meta) => displayWidth(meta.url)));
  const time = wall ? (us: number) => wall(info.startTimestamp + us / 1000) : formatSeconds;
  const timeWidth = time(info.totalDuration * 1000).length;
  try {
    for (const frame of cursorFrames(reader)) {
      const pending = out.write(
        `${time(frame.timestamp).padStart(timeWidth)}  ${frame.url}${' '.repeat(urlWidth - displayWidth(frame.url))}  ${actionText(frame.actionType).padEnd(6)}  ${formatSize(frame.data.byteLength)}\n`,
      );
      if (pending) await pending;
    }
  } finally {
    // The lines of the frames read before a failure go out before the error (as `cat`'s do).
    await out.end();
  }
}
