import type { Command } from 'commander';
import { repairBag, type RepairReport } from '@vlink/bag';
import { openBag, prepareOutput } from '../lib/bag-io.js';
import { confirm } from '../lib/confirm.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';

interface FixFlags {
  yes?: boolean;
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
    .option('-y, --yes', 'do not ask for confirmation on a terminal')
    .option('-O, --output <file>', 'write the repaired bag here and leave <path> as it is')
    .option('--no-backup', 'replace <path> without keeping the original as <path>.bak')
    .option('--rebuild', 'rewrite the bag even when it passes check')
    .option('--json', 'print the report (frames and bytes recovered and lost, per url) as JSON')
    .option('-f, --force', 'with --output: overwrite an existing file')
    .option('-q, --quiet', 'print nothing when nothing was lost')
    .action(async (path: string, flags: FixFlags) => {
      if (flags.output !== undefined)
        await prepareOutput(flags.output, { inputs: [path], force: flags.force === true, quiet: flags.quiet === true });
      else if (!flags.rebuild && (await passesCheck(path))) {
        if (flags.json) process.stdout.write(`${JSON.stringify({ path, ok: true, rewritten: false })}\n`);
        else if (!flags.quiet) process.stdout.write(`${path}: ok, nothing to fix\n`);
        return;
      }
      if (flags.output === undefined && !flags.yes && process.stdin.isTTY && process.stderr.isTTY) {
        const keep = flags.backup === false ? 'without a backup' : `keeping the original as ${path}.bak`;
        if (!(await confirm(`Repair ${path} in place, ${keep}? [y/N] `)))
          throw new CliError('not fixed (not confirmed)', path);
      }
      const report = await repairBag(path, {
        ...(flags.output === undefined ? {} : { output: flags.output }),
        backup: flags.backup !== false,
      });
      if (flags.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else if (!flags.quiet || !report.lossless) process.stdout.write(describe(report));
      if (!report.lossless) process.exitCode = 1;
    });
  examples(command, [
    'vlink-bag fix /tmp/broken.vcap',
    'vlink-bag fix /tmp/broken.vdb --output /tmp/repaired.vdb',
    'vlink-bag fix -y --no-backup --json /tmp/broken.vcapx',
  ]);
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
