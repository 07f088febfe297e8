import { Option, type Command } from 'commander';
import type { BagWriterOptions } from '@vlink/bag';
import { usageError } from './errors.js';
import { listOption } from './list-option.js';
import {
  parseCompressChoice,
  parseCompressLevel,
  parseNonNegative,
  parseNonNegativeInteger,
  parsePositive,
  type CompressChoice,
} from './parse.js';

const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;

/** Writer flags shared by record, clone and merge (VLink's `BagWriter::Config`, format reference §1.2). */
export interface WriterFlags {
  compress?: CompressChoice;
  compressLevel?: number;
  ignoreCompress?: string[];
  splitBySize?: number;
  splitByTime?: number;
  splitNameByTime?: boolean;
  maxSplitCount?: number;
  tag?: string;
  wal?: boolean;
  cacheSize?: number;
  enableLimit?: boolean;
  maxRowCount?: number;
  maxBytesSize?: number;
  /** commander's `--no-chunk-crc`: false when given. */
  chunkCrc?: boolean;
  force?: boolean;
}

/**
 * Adds the writer flags. `-o` is `--split-name-by-time` (as in VLink) except for merge, where `-o` names the output.
 */
export function addWriterOptions(command: Command, options: { splitNameShort: boolean }): Command {
  return command
    .addOption(
      new Option(
        '-p, --compress [type]',
        'compression: none, auto, zstd (.vcap), lzav (.vdb); -p alone = auto; other values as --compress=<type>',
      ).argParser(parseCompressChoice),
    )
    .addOption(
      new Option(
        '--compress-level <n>',
        'compression level 1-5 (0 = default 3; > 3 picks the high-ratio LZAV)',
      ).argParser(parseCompressLevel),
    )
    .addOption(listOption('--ignore-compress <urls>', 'urls whose payloads are never compressed (.vdb)'))
    .addOption(new Option('-z, --split-by-size <GB>', 'split size in GB (.vdbx/.vcapx)').argParser(parsePositive))
    .addOption(
      new Option('-y, --split-by-time <s>', 'split interval in seconds (.vdbx/.vcapx; wins over size)').argParser(
        parsePositive,
      ),
    )
    .addOption(
      new Option(
        options.splitNameShort ? '-o, --split-name-by-time' : '--split-name-by-time',
        'name split segments by time',
      ),
    )
    .addOption(
      new Option('--max-split-count <n>', 'keep at most n split segments (0 = unlimited)').argParser(
        parseNonNegativeInteger,
      ),
    )
    .addOption(new Option('-t, --tag <name>', 'tag name written to the header'))
    .addOption(new Option('-j, --wal', 'SQLite WAL journal mode (.vdb)'))
    .addOption(
      new Option('-c, --cache-size <MB>', 'commit threshold (.vdb) / chunk size (.vcap) in MB').argParser(
        parsePositive,
      ),
    )
    .addOption(new Option('--enable-limit', 'evict the oldest rows instead of refusing new ones at a limit (.vdb)'))
    .addOption(new Option('--max-row-count <n>', 'row limit per file (.vdb)').argParser(parseNonNegativeInteger))
    .addOption(
      new Option('--max-bytes-size <GB>', 'payload byte limit per file in GB (.vdb)').argParser(parseNonNegative),
    )
    .addOption(new Option('--no-chunk-crc', '.vcap: write no chunk and data-section CRCs (written by default)'))
    .addOption(new Option('-f, --force', 'overwrite an existing output without asking'));
}

/**
 * Maps the flags onto `BagWriter.create` options; unset flags keep VLink's defaults. A level without compression is
 * a usage error in VLink's words ("Must set compress [-p]"), not silently ignored.
 */
export function writerOptions(flags: WriterFlags): BagWriterOptions {
  const options: BagWriterOptions = {};
  if (flags.compressLevel !== undefined && (flags.compress === undefined || flags.compress === 'none'))
    throw usageError(`--compress-level ${flags.compressLevel}: Must set compress [-p]`);
  if (flags.compress !== undefined) options.compress = flags.compress;
  if (flags.compressLevel !== undefined && flags.compressLevel > 0) options.compressLevel = flags.compressLevel;
  if (flags.ignoreCompress) options.ignoreCompressUrls = flags.ignoreCompress;
  if (flags.splitBySize !== undefined) options.splitBySize = Math.round(flags.splitBySize * GiB);
  if (flags.splitByTime !== undefined) options.splitByTime = Math.round(flags.splitByTime * 1000);
  if (flags.splitNameByTime) options.splitNameByTime = true;
  if (flags.maxSplitCount !== undefined) options.maxSplitCount = flags.maxSplitCount;
  if (flags.tag !== undefined) options.tagName = flags.tag;
  if (flags.wal) options.walMode = true;
  if (flags.cacheSize !== undefined) options.cacheSize = Math.round(flags.cacheSize * MiB);
  if (flags.enableLimit) options.enableLimit = true;
  if (flags.maxRowCount !== undefined) options.maxRowCount = flags.maxRowCount;
  if (flags.maxBytesSize !== undefined) options.maxBytesSize = Math.round(flags.maxBytesSize * GiB);
  if (flags.chunkCrc === false) options.enableChunkCrc = false;
  return options;
}
