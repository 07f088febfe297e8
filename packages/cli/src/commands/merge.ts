import { Option, type Command } from 'commander';
import { BagProcessor, type BagReader, type Frame } from '@vlink/bag';
import { openBag, prepareOutput } from '../lib/bag-io.js';
import { CliError, usageError } from '../lib/errors.js';
import { actionPredicate, addFilterOptions, examples, windowMs, type FilterFlags } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';
import { addPluginOptions, applyToWriter, loadPlugin, loadSchemas, type PluginFlags } from '../lib/plugins.js';
import { formatSize } from '../lib/format.js';
import { parseNonNegative } from '../lib/parse.js';
import { liveOutput, Progress } from '../lib/progress.js';
import { cursorFrames } from '../lib/read.js';
import { carriedRecords, carryCounters, headerOptions, warnUncarried } from '../lib/header-copy.js';
import { refuseLeftOut } from '../lib/left-out.js';
import {
  addRecoveryOption,
  readAroundWarnings,
  type RecoveryFlags,
  recoveryReaderOptions,
} from '../lib/recovery-flag.js';
import { CopySink } from '../lib/sink.js';
import { selectUrls, warnSelection } from '../lib/url-filter.js';
import { addWriterOptions, writerOptions, type WriterFlags } from '../lib/writer-flags.js';
import { printWarnings } from '../lib/output.js';

export interface MergeFlags extends FilterFlags, WriterFlags, PluginFlags, RecoveryFlags {
  output: string;
  checkGap: number;
  json?: boolean;
  quiet?: boolean;
  /** false with `--no-header`: the output gets this machine's process name and timezone and the default tag. */
  header?: boolean;
}

export function registerMerge(program: Command): void {
  const command = program
    .command('merge')
    .description("merge bags into one in absolute time (each bag's recording start + frame time)")
    .argument('<src...>', 'two or more bags (any format, mixed); frames of each must be in time order')
    .requiredOption('-o, --output <dst>', 'output bag; its extension picks the format')
    .addOption(
      new Option('--check-gap <s>', 'refuse inputs whose recording starts are further apart than this')
        .argParser(parseNonNegative)
        .default(3600),
    )
    .option('--json', 'print the result (sources, output, frames, bytes, warnings) as JSON')
    .option('-q, --quiet', 'no progress bar and no summary')
    .option('--no-header', "do not copy the first input's header (tag, process name, timezone)");
  addRecoveryOption(command);
  addFilterOptions(command);
  addWriterOptions(command, { splitNameShort: false });
  addPluginOptions(command, 'write');
  command.action(async (sources: string[], flags: MergeFlags) => {
    if (sources.length < 2) throw usageError('merge needs at least two input bags');
    writerOptions(flags); // usage errors before any file is opened
    await mergeFiles(sources, flags);
  });
  examples(command, [
    'vlink-bag merge /tmp/a.vdb /tmp/b.vcap -o /tmp/merged.vdb',
    'vlink-bag merge cam.vdb lidar.vdb -o both.vcap -p zstd -b 5 -e 65',
  ]);
}

/** Merges `sources` into `flags.output` (also used by `play -f a -f b`). */
export async function mergeFiles(sources: string[], flags: MergeFlags): Promise<void> {
  const readers: BagReader[] = [];
  try {
    for (const src of sources) readers.push(await openBag(src, recoveryReaderOptions(flags)));
    await mergeInto(sources, readers, flags);
  } finally {
    for (const reader of readers) reader.close();
  }
}

async function mergeInto(sources: string[], readers: BagReader[], flags: MergeFlags): Promise<void> {
  const dst = flags.output;
  const infos = readers.map((reader) => reader.getInfo());
  const starts = infos.map((info) => info.startTimestamp);
  const outStart = Math.min(...starts);
  const gapMs = Math.max(...starts) - outStart;
  if (gapMs > flags.checkGap * 1000) {
    throw new CliError(
      `recording starts are ${(gapMs / 1000).toFixed(3)} s apart, more than --check-gap ${flags.checkGap} s`,
      sources[starts.indexOf(Math.max(...starts))],
    );
  }
  const allUrls = [...new Set(infos.flatMap((info) => info.urls.map((meta) => meta.url)))];
  const selection = selectUrls(allUrls, flags);
  // The window is relative to the earliest recording start (as VLink's merge does).
  const lastMs = Math.max(...infos.map((info, i) => starts[i]! - outStart + info.totalDuration));
  const window = windowMs(flags, { startTimestamp: outStart, totalDuration: lastMs });
  const [plugin, schemas] = [await loadPlugin(flags.plugin), await loadSchemas(flags.importSchema)];
  for (const [i, src] of sources.entries()) await refuseLeftOut(src, infos[i]!, flags);
  const { overwrite } = await prepareOutput(dst, {
    inputs: sources,
    force: flags.force === true,
    quiet: flags.quiet === true || flags.json === true,
    splitNameByTime: flags.splitNameByTime === true,
  });
  warnSelection('merge', sources.join(', '), selection, flags.quiet);
  const readAround = sources.flatMap((src, i) => readAroundWarnings(flags, infos[i]!).map((w) => `${src}: ${w}`));
  printWarnings('merge', sources.join(', '), readAround, flags.quiet);
  const keepAction = actionPredicate(flags.actions);
  const beginUs = window.beginTime * 1000;
  const endUs = window.endTime > 0 ? window.endTime * 1000 : Number.POSITIVE_INFINITY;

  for (const info of infos) warnUncarried('merge', dst, info, flags.quiet || flags.json);
  const kept = selection.filterUrls ? new Set(selection.filterUrls) : undefined;
  const keepUrl = (url: string) => !kept || kept.has(url);
  // The first input's header; every input's metadata records, attachments and url encodings (plain .mcap stores them).
  const carried = readers.map((reader, i) => carriedRecords(reader, infos[i]!, keepUrl));
  const sink = await CopySink.open(dst, {
    ...headerOptions(infos[0]!, flags.header !== false),
    ...writerOptions(flags),
    overwriteSegments: overwrite,
    startTimestamp: outStart,
    carry: {
      metadata: carried.flatMap((c) => c.metadata ?? []),
      attachments: carried.flatMap((c) => c.attachments ?? []),
      urlEncodings: Object.assign({}, ...[...carried].reverse().map((c) => c.urlEncodings)),
    },
  });
  const progress = new Progress(liveOutput(flags.quiet || flags.json), 'merge');
  // BagProcessor (format reference §8) with data time = the merged timeline: the k-way merge below already delivers frames in
  // order, the processor adds VLink's output rule (strictly increasing: equal instants 1 µs apart). A failed write
  // inside its output callback is kept and rethrown here (the processor itself would only report it and go on).
  const processor = new BagProcessor();
  let writeError: unknown;
  processor.registerOutputCallback((frame) => {
    if (writeError !== undefined) return;
    try {
      sink.push(frame);
    } catch (error) {
      writeError = error;
    }
  });
  try {
    applyToWriter(sink.writer, plugin, schemas);
    for (const reader of readers) for (const schema of reader.getSchemas()) sink.pushSchema(schema);
    const keep = new Set(selection.filterUrls ?? allUrls);
    const withLoss = new Set<string>();
    for (const meta of infos.flatMap((info) => info.urls)) {
      if (meta.loss < 0 || !keep.has(meta.url) || withLoss.has(meta.url)) continue;
      withLoss.add(meta.url);
      sink.writer.setUrlLoss(meta.url, meta.loss);
    }
    // Counted per url and cause over every input (the same url's drops in two bags add up).
    for (const info of infos) carryCounters(sink.writer, info, keepUrl);
    if (!selection.none) {
      const lastUs = Math.max(...infos.map((info, i) => (starts[i]! - outStart + info.totalDuration) * 1000));
      const totalUs = Math.min(endUs, lastUs) - beginUs;
      progress.start(Math.max(1, totalUs / 1000));
      for (const { frame, atUs } of mergeByTime(readers, starts, outStart, beginUs, selection.filterUrls)) {
        if (atUs > endUs) break;
        if (keepAction && !keepAction(frame)) continue;
        // A publish time counts from its own recording's start, like the frame's time: move it to the output's.
        const shifted: Frame = { ...frame, timestamp: atUs };
        if (frame.publishTime !== undefined) shifted.publishTime = frame.publishTime + (atUs - frame.timestamp);
        if (!processor.push(atUs, shifted)) await processor.waitForRoom();
        if (writeError !== undefined) throw writeError;
        if ((sink.frames & 1023) === 0) progress.update((atUs - beginUs) / 1000, sink.frames, formatSize(sink.bytes));
      }
      processor.close();
      if (writeError !== undefined) throw writeError;
      progress.update(totalUs / 1000, sink.frames, formatSize(sink.bytes));
    }
    processor.close();
    progress.stop();
    await sink.close();
  } catch (error) {
    processor.close();
    progress.stop();
    throw await sink.abandon(error);
  }
  if (flags.json)
    printJson({
      sources,
      output: dst,
      frames: sink.frames,
      bytes: sink.bytes,
      warnings: [...selection.warnings, ...readAround],
    });
  else if (!flags.quiet)
    process.stdout.write(
      `${dst}: ${sink.frames} frames (${formatSize(sink.bytes)}) merged from ${sources.length} bags\n`,
    );
}

/**
 * A k-way merge of the readers' cursors on absolute time (recording start + frame time), as µs since `outStart`;
 * ties go to the earlier input. A yielded frame stays valid until the next step (its reader is advanced only then).
 */
function* mergeByTime(
  readers: readonly BagReader[],
  starts: readonly number[],
  outStart: number,
  beginUs: number,
  filterUrls: string[] | undefined,
): Generator<{ frame: Frame; atUs: number }> {
  const cursors = readers.map((reader, i) => {
    const offsetUs = (starts[i]! - outStart) * 1000;
    const frames = cursorFrames(reader, {
      beginTime: Math.max(0, (beginUs - offsetUs) / 1000),
      ...(filterUrls ? { filterUrls } : {}),
    });
    return { frames, offsetUs, head: frames.next().value ?? undefined };
  });
  for (;;) {
    let pick: (typeof cursors)[number] | undefined;
    let pickUs = Number.POSITIVE_INFINITY;
    for (const cursor of cursors) {
      if (cursor.head && cursor.head.timestamp + cursor.offsetUs < pickUs) {
        pick = cursor;
        pickUs = cursor.head.timestamp + cursor.offsetUs;
      }
    }
    if (!pick) return;
    yield { frame: pick.head!, atUs: pickUs };
    pick.head = pick.frames.next().value ?? undefined;
  }
}
