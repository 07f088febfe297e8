import { Option, type Command } from 'commander';
import { detectBackend, repairBag, summarizeBag, writeSummaryFile, type RepairReport } from '@vlink/bag';
import { openBag, prepareOutput } from '../lib/bag-io.js';
import { confirm } from '../lib/confirm.js';
import { CliError, usageError } from '../lib/errors.js';
import { printJson } from '../lib/json-schemas.js';
import { failedFixReport, isVerdict } from '../lib/open-failure.js';
import { liveOutput, StepBar } from '../lib/progress.js';
import { examples } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';

interface FixFlags {
  yes?: boolean;
  vlinkY?: boolean;
  rebuild?: boolean;
  backup?: boolean;
  output?: string;
  json?: boolean;
  quiet?: boolean;
  force?: boolean;
}

export function registerFix(program: Command): void {
  const command = program
    .command('fix')
    .description(
      'repair a damaged or unfinished bag: salvage every readable frame into a new copy, check it, then replace the bag (the original kept as <path>.bak) or write --output; exit 1 when anything was lost',
    )
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .option('--yes', 'do not ask for confirmation on a terminal')
    .addOption(new Option('-y, --vlink-y', 'refused: VLink -y means rebuild, ours meant --yes').hideHelp())
    .option('-O, --output <file>', 'write the repaired bag here and leave <path> as it is')
    .option('--no-backup', 'replace <path> without keeping the original as <path>.bak')
    .option('--rebuild', 'rewrite the bag even when it passes check')
    .option('--json', 'print the report (frames and bytes recovered and lost, per url) as JSON')
    .option('-f, --force', 'with --output: overwrite an existing file')
    .option('-q, --quiet', 'print nothing when nothing was lost')
    .action((path: string, flags: FixFlags) => fixBag(path, flags));
  examples(command, [
    'vlink-bag fix /tmp/broken.vcap',
    'vlink-bag fix /tmp/broken.vdb --output /tmp/repaired.vdb',
    'vlink-bag fix --yes --no-backup --json /tmp/broken.vcapx',
  ]);
}

/** Apollo's `cyber_recorder recover -f <in> -o <out>`: `fix <in> --output <out>`. */
export function registerRecover(program: Command): void {
  const command = program
    .command('recover')
    .description("Apollo's recover: write the repaired copy of a bag to -o (fix --output); the input is left as it is")
    .requiredOption('-f, --file <path>', 'the damaged bag')
    .requiredOption('-o, --output <file>', 'where the repaired bag goes')
    .option('--force', 'overwrite an existing output')
    .option('--json', 'print the report as JSON (the fix schema)')
    .option('-q, --quiet', 'print nothing when nothing was lost')
    .action((flags: { file: string; output: string; force?: boolean; json?: boolean; quiet?: boolean }) => {
      const { file, ...rest } = flags;
      return fixBag(file, { ...rest, rebuild: true });
    });
  examples(command, ['vlink-bag recover -f /tmp/broken.vcap -o /tmp/recovered.vcap']);
}

async function fixBag(path: string, flags: FixFlags): Promise<void> {
  if (flags.vlinkY)
    throw usageError(
      "-y is not accepted: in VLink's fix it means rebuild (here --rebuild), here it used to mean --yes; write the one you mean",
    );
  try {
    await repairOrCheck(path, flags);
  } catch (error) {
    // A bag that cannot be repaired (or opened) still gets its --json verdict, with where it failed.
    if (flags.json && isVerdict(error)) printJson(failedFixReport(error, path));
    throw error;
  }
}

async function repairOrCheck(path: string, flags: FixFlags): Promise<void> {
  if (flags.output !== undefined)
    await prepareOutput(flags.output, { inputs: [path], force: flags.force === true, quiet: flags.quiet === true });
  else if (!flags.rebuild && (await passesCheck(path))) {
    await rewriteSummary(path, []);
    if (flags.json) printJson({ path, ok: true, rewritten: false });
    else if (!flags.quiet) process.stdout.write(`${path}: ok, nothing to fix\n`);
    return;
  }
  if (flags.output === undefined && !flags.yes && process.stdin.isTTY && process.stderr.isTTY) {
    const keep = flags.backup === false ? 'without a backup' : `keeping the original as ${path}.bak`;
    if (!(await confirm(`Repair ${path} in place, ${keep}? [y/N] `)))
      throw new CliError('not fixed (not confirmed)', path);
  }
  const bar = new StepBar(liveOutput(flags.quiet || flags.json), `fix ${path}`);
  let report: RepairReport;
  try {
    const onProgress = bar.onProgress;
    report = await repairBag(path, {
      ...(flags.output === undefined ? {} : { output: flags.output }),
      backup: flags.backup !== false,
      ...(onProgress ? { onProgress } : {}),
    });
  } finally {
    bar.stop();
  }
  // The sidecar summary of the repaired bag, with what the repair found as its errors.
  await rewriteSummary(report.output, [
    ...(report.lossless ? [] : [`LOST: ${report.lostFrames} frames, ${report.lostBytes} bytes`]),
    ...report.lostMetadata.map((what) => `LOST: ${what}`),
    ...report.problems.map((p) => `REPAIRED: ${p}`),
  ]);
  if (flags.json) printJson(report);
  else if (!flags.quiet || !report.lossless) process.stdout.write(describe(report));
  if (!report.lossless) process.exitCode = 1;
}

/**
 * Rewrites `<path>.json` (format reference §13) from the bag as it now is, for the formats `fix` can repair: a foreign
 * recording is read-only here, and gets nothing written beside it (`fix` on a sound ROS 1 bag left a `.bag.json`).
 */
async function rewriteSummary(path: string, errors: string[]): Promise<void> {
  const reader = await openBag(path);
  try {
    // The same rule as the repair's (repair-file.ts): a backend without `salvage` reads a format we do not repair.
    if ((await detectBackend(path)).salvage === undefined) return;
    writeSummaryFile(path, await summarizeBag(reader, { errors }));
  } finally {
    reader.close();
  }
}

async function passesCheck(path: string): Promise<boolean> {
  let reader: Awaited<ReturnType<typeof openBag>>;
  try {
    reader = await openBag(path);
  } catch {
    return false;
  }
  try {
    return (await reader.verify()).ok;
  } catch {
    return false;
  } finally {
    reader.close();
  }
}

/** The report as text: the verdict line, one line per url that lost anything, then the problems. */
export function describe(r: RepairReport): string {
  const where = r.replaced
    ? r.backup
      ? `; original kept as ${r.backup}`
      : '; original replaced'
    : ` into ${r.output}`;
  const lost = r.lossless ? 'nothing lost' : `${r.lostFrames} frames and ${formatSize(r.lostBytes)} lost`;
  const lines = [`${r.path}: fixed: ${r.frames} frames (${formatSize(r.bytes)}) recovered, ${lost}${where}`];
  // Frames the file's own counts say it held, of no url the copy can name (its url rows were cut too).
  const unattributed = r.lostFrames - r.urls.reduce((n, u) => n + u.lostFrames, 0);
  if (unattributed > 0) lines.push(`  ${unattributed} frames lost of urls the file no longer names`);
  for (const what of r.lostMetadata) lines.push(`  lost: ${what}`);
  for (const u of r.urls) {
    if (u.lostFrames === 0 && u.lostBytes === 0) continue;
    const name = u.action ? `${u.url} [${u.action}]` : u.url;
    lines.push(
      `  ${name}: ${u.recoveredFrames} frames (${formatSize(u.recoveredBytes)}) recovered, ${u.lostFrames} frames (${formatSize(u.lostBytes)}) lost`,
    );
  }
  for (const p of r.problems.slice(0, 20)) lines.push(`  ${p}`);
  if (r.problems.length > 20) lines.push(`  … ${r.problems.length - 20} more`);
  return `${lines.join('\n')}\n`;
}
