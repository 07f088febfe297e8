import type { Command } from 'commander';
import { openBag, prepareOutput } from '../lib/bag-io.js';
import { addFilterOptions, examples, windowMs, type FilterFlags } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';
import { liveOutput, Progress } from '../lib/progress.js';
import { cursorFrames } from '../lib/read.js';
import { CopySink } from '../lib/sink.js';
import { bagUrls, selectUrls } from '../lib/url-filter.js';
import { addWriterOptions, writerOptions, type WriterFlags } from '../lib/writer-flags.js';

interface CloneFlags extends FilterFlags, WriterFlags {
  quiet?: boolean;
}

export function registerClone(program: Command): void {
  const command = program
    .command('clone')
    .description('copy a bag into a new file, converting between formats, with url/time filters and new compression')
    .argument('<src>', 'source bag (.vdb, .vdbx, .vcap, .vcapx)')
    .argument('<dst>', 'target bag; its extension picks the format')
    .option('-q, --quiet', 'no progress bar and no summary');
  addFilterOptions(command);
  addWriterOptions(command, { splitNameShort: true });
  command.action(async (src: string, dst: string, flags: CloneFlags) => {
    const reader = await openBag(src);
    try {
      await prepareOutput(dst, {
        inputs: [src],
        force: flags.force === true,
        quiet: flags.quiet === true,
        splitNameByTime: flags.splitNameByTime === true,
      });
      const info = reader.getInfo();
      const selection = selectUrls(bagUrls(info), flags.urls, flags.skipUrls);
      const window = windowMs(flags);
      // Same recording start and tag as the source, so every frame keeps its timestamp (format reference §2.9, §5.3).
      const sink = await CopySink.open(dst, {
        tagName: info.tagName,
        ...writerOptions(flags),
        startTimestamp: info.startTimestamp,
      });
      const progress = new Progress(liveOutput(flags.quiet), 'clone');
      try {
        for (const schema of reader.getSchemas()) sink.pushSchema(schema);
        const keep = new Set(selection.filterUrls ?? bagUrls(info));
        for (const meta of info.urls)
          if (meta.loss >= 0 && keep.has(meta.url)) sink.writer.setUrlLoss(meta.url, meta.loss);
        if (!selection.none) {
          const endMs = window.endTime > 0 ? Math.min(window.endTime, info.totalDuration) : info.totalDuration;
          progress.start(Math.max(1, endMs - window.beginTime));
          const config = { ...window, ...(selection.filterUrls ? { filterUrls: selection.filterUrls } : {}) };
          for (const frame of cursorFrames(reader, config)) {
            sink.push(frame);
            if ((sink.frames & 1023) === 0)
              progress.update(frame.timestamp / 1000 - window.beginTime, sink.frames, formatSize(sink.bytes));
          }
          progress.update(endMs - window.beginTime, sink.frames, formatSize(sink.bytes));
        }
      } finally {
        progress.stop();
        await sink.close();
      }
      if (!flags.quiet)
        process.stdout.write(`${dst}: ${sink.frames} frames (${formatSize(sink.bytes)}) cloned from ${src}\n`);
    } finally {
      reader.close();
    }
  });
  examples(command, [
    'vlink-bag clone /tmp/capture.vcap /tmp/result.vdb',
    'vlink-bag clone /tmp/test.vdb /tmp/clipped.vdb -b 10 -e 60 -p lzav',
    'vlink-bag clone /tmp/test.vdb /tmp/imu.vcap -u dds://imu -p zstd',
  ]);
}
