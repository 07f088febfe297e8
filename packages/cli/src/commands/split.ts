import { Option, type Command } from 'commander';
import { addFilterOptions, examples } from '../lib/filter-flags.js';
import { listOption } from '../lib/list-option.js';
import { parseCompressChoice } from '../lib/parse.js';
import { addRecoveryOption } from '../lib/recovery-flag.js';
import { cloneBag, type CloneFlags } from './clone.js';

interface SplitFlags extends CloneFlags {
  file: string;
  output: string;
  whiteChannel?: string[];
  all?: boolean;
}

/**
 * Apollo's `cyber_recorder split -f <in> -o <out> [-b …] [-e …] [-c ch] [-k ch]`: a windowed `clone`. `-b/-e` take
 * Apollo's datetimes (`2026-03-17-10:00:05`, local time) or our seconds; `-c` keeps channels (our `-u`), `-k` drops
 * them. `-f` is the input here (Apollo), so overwriting an output needs the long `--force`.
 */
export function registerSplit(program: Command): void {
  const command = program
    .command('split')
    .description("Apollo's split: copy a time window (and channels) of a bag into a new file — a windowed clone")
    .requiredOption('-f, --file <path>', 'the bag to cut from')
    .requiredOption('-o, --output <file>', 'the new bag; its extension picks the format')
    .addOption(listOption('-c, --white-channel <channels>', 'only these channels / urls (Apollo -c; our -u)'))
    .addOption(new Option('-a, --all', 'every channel (the default)').conflicts('whiteChannel'))
    .addOption(
      new Option('-p, --compress [type]', 'compression: none, auto, zstd, lzav; -p alone = auto').argParser(
        parseCompressChoice,
      ),
    )
    .option('--force', 'overwrite an existing output')
    .option('--json', 'print the result as JSON (the clone schema)')
    .option('-q, --quiet', 'no progress bar and no summary');
  addRecoveryOption(command);
  addFilterOptions(command);
  command.action((flags: SplitFlags) => {
    const { file, output, whiteChannel, ...rest } = flags;
    const urls = [...(rest.urls ?? []), ...(whiteChannel ?? [])];
    return cloneBag('split', file, output, { ...rest, ...(urls.length > 0 ? { urls } : {}) });
  });
  examples(command, [
    'vlink-bag split -f drive.vdb -o clip.vdb -b 2026-03-17-10:00:05 -e 2026-03-17-10:00:35',
    'vlink-bag split -f drive.vcap -o imu.vcap -c /imu -b 10 -e 20',
  ]);
}
