import type { Command } from 'commander';
import { openBag, prepareOutput } from '../lib/bag-io.js';
import {
  addRecoveryOption,
  readAroundWarnings,
  type RecoveryFlags,
  recoveryReaderOptions,
} from '../lib/recovery-flag.js';
import { printWarnings } from '../lib/output.js';
import { actionPredicate, addFilterOptions, examples, windowMs, type FilterFlags } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';
import { printJson } from '../lib/json-schemas.js';
import { addPluginOptions, applyToWriter, loadPlugin, loadSchemas, type PluginFlags } from '../lib/plugins.js';
import { liveOutput, Progress } from '../lib/progress.js';
import { cursorFrames } from '../lib/read.js';
import { carriedRecords, carryCounters, headerOptions, warnUncarried } from '../lib/header-copy.js';
import { refuseLeftOut } from '../lib/left-out.js';
import { CopySink } from '../lib/sink.js';
import { bagUrls, selectUrls, warnSelection } from '../lib/url-filter.js';
import { addWriterOptions, writerOptions, type WriterFlags } from '../lib/writer-flags.js';

export interface CloneFlags extends FilterFlags, WriterFlags, PluginFlags, RecoveryFlags {
  json?: boolean;
  quiet?: boolean;
  /** false with `--no-header`: the copy gets this machine's process name and timezone and the default tag. */
  header?: boolean;
}

export function registerClone(program: Command): void {
  const command = program
    .command('clone')
    .description('copy a bag into a new file, converting between formats, with url/time filters and new compression')
    .argument('<src>', 'source bag (.vdb, .vdbx, .vcap, .vcapx, .mcap, .bag, a ROS 2 bag, .record, .ulg)')
    .argument('<dst>', 'target bag; its extension picks the format')
    .option('--json', 'print the result (source, output, frames, bytes, warnings) as JSON')
    .option('-q, --quiet', 'no progress bar and no summary')
    .option('--no-header', "do not copy the source's header (tag, process name, timezone)");
  addRecoveryOption(command);
  addFilterOptions(command);
  addWriterOptions(command, { splitNameShort: true });
  addPluginOptions(command, 'write');
  command.action((src: string, dst: string, flags: CloneFlags) => cloneBag('clone', src, dst, flags));
  examples(command, [
    'vlink-bag clone /tmp/capture.vcap /tmp/result.vdb',
    'vlink-bag clone /tmp/test.vdb /tmp/clipped.vdb -b 10 -e 60 -p lzav',
    'vlink-bag clone /tmp/test.vdb /tmp/imu.vcap -u dds://imu,dds://gps --compress=zstd',
    'vlink-bag clone run.bag run.mcap',
  ]);
}

/** clone, and Apollo's `split` (a windowed clone): the frames of `src` in the window, filtered, into `dst`. */
export async function cloneBag(verb: string, src: string, dst: string, flags: CloneFlags): Promise<void> {
  const options = writerOptions(flags);
  const [plugin, schemas] = [await loadPlugin(flags.plugin), await loadSchemas(flags.importSchema)];
  const reader = await openBag(src, recoveryReaderOptions(flags));
  try {
    const info = reader.getInfo();
    const selection = selectUrls(bagUrls(info), flags);
    const window = windowMs(flags, info);
    await refuseLeftOut(src, info, flags);
    const { overwrite } = await prepareOutput(dst, {
      inputs: [src],
      force: flags.force === true,
      quiet: flags.quiet === true || flags.json === true,
      splitNameByTime: flags.splitNameByTime === true,
    });
    warnSelection(verb, src, selection, flags.quiet);
    const readAround = readAroundWarnings(flags, info);
    printWarnings(verb, src, readAround, flags.quiet);
    const keepAction = actionPredicate(flags.actions);
    warnUncarried(verb, dst, info, flags.quiet || flags.json);
    const kept = selection.filterUrls ? new Set(selection.filterUrls) : undefined;
    const keepUrl = (url: string) => !kept || kept.has(url);
    // Same recording start and header as the source, so every frame keeps its timestamp (format reference §2.9, §5.3).
    const sink = await CopySink.open(dst, {
      ...headerOptions(info, flags.header !== false),
      ...options,
      overwriteSegments: overwrite,
      startTimestamp: info.startTimestamp,
      carry: carriedRecords(reader, info, keepUrl),
    });
    const progress = new Progress(liveOutput(flags.quiet || flags.json), verb);
    try {
      applyToWriter(sink.writer, plugin, schemas);
      for (const schema of reader.getSchemas()) sink.pushSchema(schema);
      const keep = new Set(selection.filterUrls ?? bagUrls(info));
      for (const meta of info.urls)
        if (meta.loss >= 0 && keep.has(meta.url)) sink.writer.setUrlLoss(meta.url, meta.loss);
      carryCounters(sink.writer, info, keepUrl);
      if (!selection.none) {
        const endMs = window.endTime > 0 ? Math.min(window.endTime, info.totalDuration) : info.totalDuration;
        progress.start(Math.max(1, endMs - window.beginTime));
        const config = { ...window, ...(selection.filterUrls ? { filterUrls: selection.filterUrls } : {}) };
        let read = 0;
        for (const frame of cursorFrames(reader, config)) {
          if (keepAction && !keepAction(frame)) continue;
          sink.push(frame);
          if ((++read & 1023) === 0)
            progress.update(frame.timestamp / 1000 - window.beginTime, sink.frames, formatSize(sink.bytes));
        }
        progress.update(endMs - window.beginTime, sink.frames, formatSize(sink.bytes));
      }
      progress.stop();
      await sink.close();
    } catch (error) {
      progress.stop();
      throw await sink.abandon(error);
    }
    if (flags.json)
      printJson({
        source: src,
        output: dst,
        frames: sink.frames,
        bytes: sink.bytes,
        warnings: [...selection.warnings, ...readAround],
      });
    else if (!flags.quiet)
      process.stdout.write(`${dst}: ${sink.frames} frames (${formatSize(sink.bytes)}) cloned from ${src}\n`);
  } finally {
    reader.close();
  }
}
