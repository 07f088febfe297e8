import { type Command, Option } from 'commander';
import { BagError, canRepair, extensionOf, formatCheckProblem, type BagReader, type CheckReport } from '@vlink/bag';
import { formatSize, table } from '../lib/format.js';
import { printJson } from '../lib/json-schemas.js';
import { Activity, liveOutput, StepBar } from '../lib/progress.js';
import { openBag } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { isVerdict, unopenedCheckReport } from '../lib/open-failure.js';
import { examples } from '../lib/filter-flags.js';
import { checkPayloads, type NotDecoded } from '../lib/payload-check.js';

interface CheckFlags {
  quick?: boolean;
  decode?: boolean;
  json?: boolean;
  quiet?: boolean;
  detail?: boolean;
}

export function registerCheck(program: Command): void {
  const command = program
    .command('check')
    .description(
      'verify a bag: every checksum and every payload decoded, the metadata against the data, split manifests against their segments; exit 0 when ok',
    )
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .addOption(new Option('--quick', 'metadata and structure only, without decoding every payload').conflicts('decode'))
    .option(
      '--decode',
      "also decode every payload through the bag's schemas (protobuf, ROS 1, CDR, JSON, flatbuffers, ULog): payloads their schema does not describe are problems",
    )
    .option('--json', 'print the report (ok, frames, problems with their location) as JSON')
    .option('-l, --detail', "VLink's detail: the counts per url and every problem, also when the bag is ok")
    .option('-q, --quiet', 'print nothing when the bag is ok')
    .action(async (path: string, flags: CheckFlags) => {
      let reader: BagReader;
      try {
        reader = await openForCheck(path);
      } catch (error) {
        // A bag that does not even open is the worst verdict, not a missing one: --json still prints its report.
        if (flags.json && isVerdict(error)) printJson(unopenedCheckReport(error, path, flags.quick === true));
        throw error;
      }
      try {
        // The full check reports rows/bytes/segments read (a bar); the quick one only says it is busy.
        const live = liveOutput(flags.quiet || flags.json);
        const quick = flags.quick === true;
        const activity = quick ? new Activity(live, `check ${path}`) : undefined;
        const bar = quick ? undefined : new StepBar(live, `check ${path}`);
        let report: CheckReport;
        let notDecoded: NotDecoded[] = [];
        let undecodable = 0;
        try {
          const onProgress = bar?.onProgress;
          report = await reader.verify(onProgress ? { quick, onProgress } : { quick });
          if (flags.decode) ({ report, notDecoded, undecodable } = await checkPayloads(reader, report));
        } finally {
          activity?.stop();
          bar?.stop();
        }
        if (flags.json) printJson(flags.decode ? { ...report, notDecoded } : report);
        else if (flags.detail) process.stdout.write(detail(reader, report));
        else if (!report.ok) {
          for (const p of report.problems) process.stdout.write(`${formatCheckProblem(p)}\n`);
          if (report.moreProblems > 0) process.stdout.write(`… and ${report.moreProblems} more problems\n`);
        }
        if (!flags.quiet && !flags.json) {
          for (const n of notDecoded) process.stdout.write(`${n.url}: ${n.frames} payloads not decoded: ${n.reason}\n`);
        }
        if (!report.ok) {
          const n = report.problems.length + report.moreProblems;
          // Payloads that do not fit their schemas are what was recorded: no repair changes them.
          const hint =
            n === undecodable
              ? 'the bag holds payloads its schemas do not describe'
              : canRepair(path)
                ? 'vlink-bag fix may repair it'
                : `this format is read-only here: vlink-bag clone --try-to-fix ${path} <copy> copies what can be read`;
          throw new CliError(
            `check failed: ${n} problem${n === 1 ? '' : 's'}${flags.json ? '' : ' (listed above)'}; ${hint}`,
            path,
          );
        }
        if (!flags.quiet && !flags.json && !flags.detail) {
          const how = report.quick ? ', quick check' : flags.decode ? ' checked and decoded' : ' checked';
          process.stdout.write(`${path}: ok (${report.frames} frames${how})\n`);
        }
      } finally {
        reader.close();
      }
    });
  examples(command, [
    'vlink-bag check /tmp/bag.vdb',
    'vlink-bag check --json /tmp/bag.vcap',
    'vlink-bag check -q /tmp/bag.vcap && echo fine',
    'vlink-bag check -l /tmp/bag.vdb',
    'vlink-bag check --decode ros2_bag/',
  ]);
}

/** `-l/--detail`: the bag's frames per url (from its metadata), then every problem with its place. */
function detail(reader: BagReader, report: CheckReport): string {
  const info = reader.getInfo();
  const rows = [
    ['[Url]', '[Action]', '[Count]', '[Size]'],
    ...info.urls.map((m) => [m.url, m.action ?? '', String(m.count), formatSize(m.size)]),
  ];
  const lines = [
    `${report.path}: ${report.ok ? 'ok' : 'damaged'}; ${report.frames} frames ${report.quick ? 'in the metadata (quick check)' : 'read and decoded'}`,
    ...table(rows, '  '),
    ...report.problems.map((p) => `  problem: ${formatCheckProblem(p)}`),
    ...(report.moreProblems > 0 ? [`  … and ${report.moreProblems} more problems`] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * A `.vcap` whose summary or footer is damaged only opens with `tryToFix`; opened that way it can still be checked
 * record by record, so the report says where the damage is. (`.vdb` files are not reopened: `tryToFix` rolls back a
 * hot journal, and check must not change the file.)
 */
async function openForCheck(path: string): Promise<BagReader> {
  try {
    return await openBag(path);
  } catch (error) {
    if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE' || !extensionOf(path).startsWith('.vcap'))
      throw error;
    try {
      return await openBag(path, { tryToFix: true });
    } catch {
      throw error;
    }
  }
}
