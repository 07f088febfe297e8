import { Option, type Command } from 'commander';
import { prepareOutput } from '../lib/bag-io.js';
import { usageError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';
import { parseNonNegative, parseNonNegativeInteger, parseSourceUrl } from '../lib/parse.js';
import { liveOutput } from '../lib/progress.js';
import { RecordSession } from '../lib/record-session.js';
import { recordFromStdin } from '../lib/stdin-source.js';
import { urlPredicate } from '../lib/url-filter.js';
import { listOption } from '../lib/list-option.js';
import { printJson } from '../lib/json-schemas.js';
import { addPluginOptions, applyToWriter, loadPlugin, loadSchemas, type PluginFlags } from '../lib/plugins.js';
import { addWriterOptions, writerOptions, type WriterFlags } from '../lib/writer-flags.js';
import type { TimeSource } from '../lib/ws-source.js';

interface RecordFlags extends WriterFlags, PluginFlags {
  stdin?: boolean;
  from?: string;
  urls?: string[];
  skipUrls?: string[];
  filter?: string[];
  all?: boolean;
  maxPacketSize?: number;
  json?: boolean;
  duration?: number;
  sync?: boolean;
  time: TimeSource;
  maxTaskDepth?: number;
  maxMemorySize?: number;
  quiet?: boolean;
}

export function registerRecord(program: Command): void {
  const command = program
    .command('record')
    .description('record frames into a new bag from NDJSON on stdin or from a Foxglove WebSocket server')
    .argument('<out>', 'bag to write; its extension picks the format (.vdb, .vdbx, .vcap, .vcapx)')
    .option('--stdin', 'read NDJSON frames (the `vlink-bag cat` shape) from stdin')
    .addOption(
      new Option(
        '--from <url>',
        'record from a Foxglove WebSocket (ws://127.0.0.1:8765) or a rosbridge server (rosbridge://127.0.0.1:9090)',
      )
        .argParser(parseSourceUrl)
        .conflicts('stdin'),
    )
    .addOption(listOption('-u, --urls <urls>', 'only these urls / topics (exact match; default: all)'))
    .addOption(listOption('-k, --skip-urls <urls>', 'leave these urls / topics out'))
    .addOption(listOption('-i, --filter <keywords>', 'only urls / topics containing one of these keywords (VLink -i)'))
    .addOption(new Option('-a, --all', "every url / topic (Apollo's -a; the default)").conflicts(['urls', 'filter']))
    .addOption(
      new Option(
        '-x, --max-packet-size <MB>',
        'leave out (and count) frames whose payload is larger (0 = no limit)',
      ).argParser(parseNonNegative),
    )
    .addOption(
      new Option('-d, --duration <s>', 'stop after this many seconds (0 = no limit)').argParser(parseNonNegative),
    )
    .addOption(
      new Option('--time <source>', "--from: frame time from the receive clock or the server's message log time")
        .choices(['receive', 'log'])
        .default('receive'),
    )
    .option('-s, --sync', 'write on the receiving thread (VLink sync mode; no queue)')
    .addOption(
      new Option('--max-task-depth <n>', 'async queue depth before frames are dropped')
        .argParser(parseNonNegativeInteger)
        .conflicts('sync'),
    )
    .addOption(
      new Option('--max-memory-size <GB>', 'async queue memory before frames are dropped')
        .argParser(parseNonNegative)
        .conflicts('sync'),
    )
    .option('--json', 'print the result (output, frames, bytes, drops, reason) as JSON on stdout')
    .option('-q, --quiet', 'no status line and no summary');
  addWriterOptions(command, { splitNameShort: true });
  addPluginOptions(command, 'write');
  command.action(async (out: string, flags: RecordFlags) => {
    if (!flags.stdin && !flags.from)
      throw usageError('record needs a source: --stdin, --from ws://host:port or --from rosbridge://host:port');
    const writer = writerOptions(flags);
    const [plugin, schemas] = [await loadPlugin(flags.plugin), await loadSchemas(flags.importSchema)];
    const { overwrite } = await prepareOutput(out, {
      force: flags.force === true,
      quiet: flags.quiet === true || flags.json === true,
    });
    // A split recording's segments are named as they open: one that would land on an existing file stops it there.
    writer.overwriteSegments = overwrite;
    if (flags.sync) writer.syncMode = true;
    if (flags.maxTaskDepth !== undefined) writer.maxTaskDepth = flags.maxTaskDepth;
    if (flags.maxMemorySize !== undefined) writer.maxMemorySize = Math.round(flags.maxMemorySize * 1024 ** 3);
    const session = new RecordSession({
      out,
      writer,
      ...(flags.duration ? { durationS: flags.duration } : {}),
      interactive: liveOutput(flags.quiet || flags.json),
      keys: !flags.stdin,
      setup: (created) => applyToWriter(created, plugin, schemas),
      ...(flags.maxPacketSize ? { maxPacketSize: Math.round(flags.maxPacketSize * 1024 * 1024) } : {}),
    });
    const accept = urlPredicate(flags);
    let result: Awaited<ReturnType<typeof session.finish>>;
    try {
      if (flags.stdin) await recordFromStdin(session, accept);
      else
        await (await import('../lib/live-source.js')).recordFromUrl(
          session,
          flags.from!,
          accept,
          flags.time,
          flags.urls,
        );
    } finally {
      result = await session.finish();
    }
    if (flags.json) {
      printJson({
        output: out,
        frames: result.frames,
        bytes: result.bytes,
        dropped: result.dropped,
        droppedBy: result.droppedBy,
        oversize: session.oversize,
        skippedWhilePaused: session.skippedWhilePaused,
        reason: result.reason,
      });
    } else if (!flags.quiet) {
      const oversize = session.oversize > 0 ? `, ${session.oversize} over --max-packet-size left out` : '';
      const causes = Object.entries(result.droppedBy).map(([cause, n]) => `${cause} ${n}`);
      const drops = (result.dropped > 0 ? `, ${result.dropped} dropped (${causes.join(', ')})` : '') + oversize;
      const skipped = session.skippedWhilePaused > 0 ? `, ${session.skippedWhilePaused} skipped while paused` : '';
      process.stderr.write(
        `${out}: ${result.frames} frames (${formatSize(result.bytes)}) recorded${drops}${skipped} (${result.reason})\n`,
      );
    }
    // Nothing is dropped for a full queue (`write` waits): a dropped frame was refused, and the recording is not whole.
    if (result.dropped > 0) process.exitCode = 1;
  });
  examples(command, [
    'vlink-bag cat in.vdb | vlink-bag record --stdin out.vcap',
    'vlink-bag record /tmp/live.vdb --from ws://127.0.0.1:8765 -u /camera,/imu -d 60 -p',
    'vlink-bag record /tmp/live.vcap --from ws://robot:8765 --time log -p zstd',
    'vlink-bag record /tmp/ros.vdb --from rosbridge://robot:9090 -u /imu,/odom -d 30',
  ]);
}
