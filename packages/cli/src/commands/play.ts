import { Option, type Command } from 'commander';
import { PlayStatus, type BagError, type BagReader, type Frame, type Info } from '@vlink/bag';
import { privateTempDir } from '@vlink/bag-core/internal';
import { openBag } from '../lib/bag-io.js';
import { CliError, usageError } from '../lib/errors.js';
import { join } from 'node:path';
import { actionPredicate, addFilterOptions, examples, windowMs, type FilterFlags } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';
import { addPluginOptions, loadPlugin } from '../lib/plugins.js';
import { mergeFiles } from './merge.js';
import { formatDuration, formatSize } from '../lib/format.js';
import type { FoxgloveFeedServer } from '@vlink/bag-server/internal';
import { serveFoxglove } from '../lib/foxglove-server.js';
import { listenKeys, type KeyName } from '../lib/keyboard.js';
import { frameLine } from '../lib/ndjson.js';
import { exitQuietlyOnEpipe, PacedLineOutput } from '../lib/output.js';
import { collect, parseHostPort, parseInteger, parseNonNegative, parseRate, type HostPort } from '../lib/parse.js';
import { liveOutput } from '../lib/progress.js';
import { StatusLine } from '../lib/status-line.js';
import { bagUrls, selectUrls, warnSelection } from '../lib/url-filter.js';

/** `--serve` without a value (commander hands the preset over unparsed). */
const DEFAULT_SERVE = '127.0.0.1:8765';

interface PlayFlags extends FilterFlags {
  file?: string[];
  loop?: boolean;
  delay?: number;
  json?: boolean;
  plugin?: string;
  vlinkKeys?: boolean;
  times: number;
  rate: number;
  skipBlank?: boolean;
  autoPause?: boolean;
  forceDelay?: number;
  stdout?: boolean;
  serve?: HostPort | typeof DEFAULT_SERVE;
  wait?: boolean;
  quiet?: boolean;
}

export function registerPlay(program: Command): void {
  const command = program
    .command('play')
    .description('replay a bag in its original timing to stdout (NDJSON) and/or a Foxglove WebSocket server')
    .argument('[path]', 'bag file (.vdb, .vdbx, .vcap, .vcapx); or name the files with -f')
    .addOption(
      new Option(
        '-f, --file <path>',
        'a bag to play (Apollo); several -f play the bags merged in absolute time',
      ).argParser(collect),
    )
    .addOption(
      new Option('-t, --times <n>', 'number of passes; 0 or less loops forever').argParser(parseInteger).default(1),
    )
    .addOption(new Option('-l, --loop', "loop forever (Apollo's -l; the same as -t 0)").conflicts('times'))
    .addOption(
      new Option('-d, --delay <s>', 'wait this many seconds before playing (Apollo)').argParser(parseNonNegative),
    )
    .addOption(new Option('-r, --rate <x>', 'speed, 0.01 to 100').argParser(parseRate).default(1))
    .option('-m, --skip-blank', 'start at the first frame instead of at the recording start')
    .option('-j, --auto-pause', 'start paused (Space resumes)')
    .addOption(
      new Option(
        '--force-delay <ms>',
        'a fixed wait before every frame instead of the recorded timing (0 = as fast as possible)',
      ).argParser(parseNonNegative),
    )
    .option('--stdout', 'write every frame to stdout as an NDJSON line (the `cat` shape)')
    .addOption(
      new Option(
        '--serve [[host:]port]',
        `serve a Foxglove WebSocket (foxglove.websocket.v1); an address only as --serve=[host:]port (default ${DEFAULT_SERVE})`,
      ).argParser((v: string) => (v.trim() === '' ? parseHostPort(DEFAULT_SERVE) : parseHostPort(v))),
    )
    .option('-w, --wait', 'with --serve: start when the first client subscribes (the default)')
    .option('--no-wait', 'with --serve: start at once')
    .option('--json', 'print a summary (frames, bytes, interrupted) as JSON at the end; not with --stdout')
    .option('--vlink-keys', "VLink's arrow keys: ↑ back 5 s, ↓ forward 5 s (default: ↑ forward, as in mpv)")
    .option('-q, --quiet', 'no status line');
  addFilterOptions(command);
  addPluginOptions(command, 'read');
  command.action(async (path: string | undefined, flags: PlayFlags) => {
    const files = [...(path === undefined ? [] : [path]), ...(flags.file ?? [])];
    if (files.length === 0) throw usageError('play needs a bag: play <path> or play -f <path> [-f <path> …]');
    if (flags.json && flags.stdout) throw usageError('--json and --stdout both write to stdout: pick one');
    if (flags.wait === true && !flags.serve) throw usageError('-w/--wait waits for a Foxglove client: add --serve');
    if (!flags.stdout && !flags.serve && !flags.json && !liveOutput(flags.quiet))
      throw usageError(
        'nothing to play to: stderr is not a terminal (or -q); add --stdout (NDJSON frames), --serve (Foxglove WebSocket) or --json (a summary)',
      );
    if (flags.loop) flags.times = 0;
    const plugin = await loadPlugin(flags.plugin);
    const merged = files.length > 1 ? await mergeToTemp(files) : undefined;
    try {
      const reader = await openBag(merged?.path ?? files[0]!);
      try {
        reader.bindPluginInterface(plugin);
        await play(reader, files.join(', '), flags);
      } finally {
        reader.close();
      }
    } finally {
      merged?.cleanup();
    }
  });
  command.addHelpText(
    'after',
    '\nKeys (on a terminal):\n  Space pause/resume   ←/→ back/forward 1 s   ↑/↓ forward/back 5 s (--vlink-keys: back/forward)\n  p one frame while paused   q or Esc quit',
  );
  examples(command, [
    'vlink-bag play /tmp/bag.vdb -r 2 -t 3',
    'vlink-bag play /tmp/bag.vdb -b 10 -e 60 --stdout | jq .url',
    'vlink-bag play /tmp/bag.vcap --serve=8765        # then open ws://127.0.0.1:8765 in Foxglove Studio',
    'vlink-bag play -f part1.vdb -f part2.vdb -d 2 -l --stdout   # Apollo style',
    'vlink-bag play /tmp/bag.vdb --force-delay 0 --stdout > frames.ndjson',
  ]);
}

async function play(reader: BagReader, path: string, flags: PlayFlags): Promise<void> {
  // Only a key resumes a paused playback (Foxglove protocol 0.8 has no playback control).
  if (flags.autoPause && !(process.stdin.isTTY && liveOutput(flags.quiet)))
    throw usageError('-j/--auto-pause needs a terminal (Space resumes) and no --quiet');
  const info = reader.getInfo();
  const selection = selectUrls(bagUrls(info), flags);
  const window = windowMs(flags, info);
  warnSelection('play', path, selection, flags.quiet);
  if (selection.none) throw new CliError('the url filters leave nothing to play', path);
  const keepAction = actionPredicate(flags.actions);
  const status = new StatusLine(liveOutput(flags.quiet));
  // Paced: each frame reaches the pipe at its replay time (`cat`'s batching writer would hold it for 64 KiB).
  const out = flags.stdout ? new PacedLineOutput() : undefined;
  if (out) exitQuietlyOnEpipe();
  const address = flags.serve === DEFAULT_SERVE ? parseHostPort(DEFAULT_SERVE) : flags.serve;
  let interrupted = false;
  const server = address
    ? await serveFoxglove(
        address,
        info,
        reader.getSchemas(),
        selection.filterUrls ? new Set(selection.filterUrls) : undefined,
      )
    : undefined;
  let frames = 0;
  let bytes = 0;
  let failure: BagError | undefined;
  const cleanups: Array<() => void> = [];
  try {
    if (server && !flags.quiet) process.stderr.write(`Serving foxglove.websocket.v1 on ${server.url}\n`);
    reader.registerOutputCallback((frame: Frame) => {
      if (keepAction && !keepAction(frame)) return undefined;
      frames++;
      bytes += frame.data.byteLength;
      server?.send(frame);
      return out?.write(frameLine(frame));
    });
    reader.registerErrorCallback((error) => (failure ??= error));
    let waiting = server !== undefined && flags.wait !== false;
    const line = () =>
      waiting
        ? `Waiting for a Foxglove client on ${server!.url} … (q: quit)`
        : statusText(reader, info, frames, bytes, flags, server);
    reader.registerStatusCallback(() => status.set(line(), true));
    const ticker = setInterval(() => status.set(line()), 100);
    cleanups.push(() => clearInterval(ticker));

    let quitting = false;
    let quitRequested!: () => void;
    const quitting$ = new Promise<void>((resolve) => (quitRequested = resolve));
    const quit = () => {
      quitting = true;
      quitRequested();
      void reader.stop();
    };
    const onSignal = () => quit();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    cleanups.push(() => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });
    if (liveOutput(flags.quiet)) cleanups.push(listenKeys((key) => onKey(reader, key, quit, flags.vlinkKeys === true)));

    if (waiting) {
      status.set(line(), true);
      await Promise.race([server!.waitForSubscriber(), quitting$]);
      waiting = false;
      if (quitting) return;
    }
    if (flags.delay) {
      const delayMs = flags.delay * 1000;
      await Promise.race([new Promise((resolve) => setTimeout(resolve, delayMs)), quitting$]);
      if (quitting) return;
    }
    const playback = reader.play({
      ...window,
      times: flags.times,
      rate: flags.rate,
      skipBlank: flags.skipBlank === true,
      autoPause: flags.autoPause === true,
      autoQuit: true,
      ...(flags.forceDelay !== undefined ? { forceDelay: flags.forceDelay } : {}),
      ...(selection.filterUrls ? { filterUrls: selection.filterUrls } : {}),
    });
    interrupted = await playback.finished;
    await reader.waitForQuit();
    status.finish(`${interrupted ? 'Stopped' : 'Finished'} | ${frames} frames | ${formatSize(bytes)}`);
    if (failure) throw failure;
  } finally {
    for (const cleanup of cleanups.splice(0)) cleanup();
    status.finish();
    await out?.end();
    await server?.close();
  }
  const warnings = [...selection.warnings];
  if (server && server.dropped > 0) {
    const warning = `${server.dropped} frames were not sent to a Foxglove client that fell behind (over 32 MiB queued)`;
    warnings.push(warning);
    if (!flags.quiet && !flags.json) process.stderr.write(`warning: ${warning}\n`);
  }
  if (flags.json) printJson({ path, frames, bytes, interrupted, warnings });
}

/** Several `-f` bags: merged in absolute time into a temporary .vdb (removed after playing), as Apollo plays them. */
async function mergeToTemp(files: string[]): Promise<{ path: string; cleanup(): void }> {
  const dir = privateTempDir('vlink-play-');
  const path = join(dir.path, 'merged.vdb');
  const cleanup = () => dir.remove();
  try {
    await mergeFiles(files, { output: path, checkGap: 3600, quiet: true, force: true });
    return { path, cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

function onKey(reader: BagReader, key: KeyName, quit: () => void, vlinkKeys: boolean): void {
  const seek = (deltaMs: number) => void reader.jump(Math.max(0, reader.getTimestamp() + deltaMs));
  switch (key) {
    case 'space':
      if (reader.getStatus() === PlayStatus.Paused) reader.resume();
      else reader.pause();
      return;
    case 'left':
      seek(-1000);
      return;
    case 'right':
      seek(1000);
      return;
    // ↑ forward as in mpv (ours); VLink's player jumps back on ↑ (--vlink-keys).
    case 'up':
      seek(vlinkKeys ? -5000 : 5000);
      return;
    case 'down':
      seek(vlinkKeys ? 5000 : -5000);
      return;
    case 'p':
      reader.pauseToNext();
      return;
    case 'q':
    case 'escape':
    case 'ctrl-c':
      quit();
      return;
  }
}

function statusText(
  reader: BagReader,
  info: Info,
  frames: number,
  bytes: number,
  flags: PlayFlags,
  server: FoxgloveFeedServer | undefined,
): string {
  const state = PlayStatus[reader.getStatus()] ?? 'Stopped';
  const parts = [
    `${formatDuration(reader.getTimestamp())}/${formatDuration(info.totalDuration)}`,
    state,
    `x${flags.rate.toFixed(2)}`,
    `${frames} frames`,
    formatSize(bytes),
  ];
  if (server) parts.push(`${server.clients} client${server.clients === 1 ? '' : 's'}`);
  if (state === 'Paused') parts.push('Space: resume, p: step, q: quit');
  return parts.join(' | ');
}
