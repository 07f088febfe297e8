import { existsSync, statSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { type DumpResult, TriggerRecorder, type TriggerParams } from '@vlink/bag';
import { CliError, usageError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { formatSize } from '../lib/format.js';
import { listenKeys } from '../lib/keyboard.js';
import { listOption } from '../lib/list-option.js';
import {
  parseHostPort,
  parseNonNegative,
  parseNonNegativeInteger,
  parseSourceUrl,
  type HostPort,
} from '../lib/parse.js';
import { liveOutput } from '../lib/progress.js';
import { recordFromStdin } from '../lib/stdin-source.js';
import { listenTriggerHttp } from '../lib/trigger-http.js';
import { TriggerSink } from '../lib/trigger-sink.js';
import { urlPredicate } from '../lib/url-filter.js';

/** Where `trigger --http` listens and `trigger dump` asks by default. */
export const DEFAULT_TRIGGER_HTTP = '127.0.0.1:8766';

interface TriggerFlags {
  stdin?: boolean;
  from?: string;
  pre: number;
  post: number;
  urls?: string[];
  skipUrls?: string[];
  format: string;
  maxDumps: number;
  maxCacheSize: number;
  compress?: boolean;
  http?: HostPort;
  json?: boolean;
  quiet?: boolean;
}

export function registerTrigger(program: Command): void {
  const command = program
    .command('trigger')
    // `trigger dump --http … --json` are the client's flags, not the daemon's (program has positional options too).
    .enablePositionalOptions()
    .description(
      'trigger (dashcam) daemon: keep the last seconds of a live source in memory and dump a window to a bag on a key, SIGUSR1, a line on stdin or POST /trigger',
    )
    .argument('<dir>', 'directory the dumps are written to (auto-named by local time, rotated)')
    .option('--stdin', 'frames from NDJSON on stdin (the `cat` shape); a {"trigger":{…}} line dumps')
    .addOption(
      new Option('--from <url>', 'frames from a Foxglove WebSocket (ws://) or rosbridge (rosbridge://) server')
        .argParser(parseSourceUrl)
        .conflicts('stdin'),
    )
    .addOption(new Option('--pre <s>', 'seconds kept before the trigger').argParser(parseNonNegative).default(15))
    .addOption(new Option('--post <s>', 'seconds recorded after the trigger').argParser(parseNonNegative).default(0))
    .addOption(listOption('-u, --urls <urls>', 'only these urls / topics'))
    .addOption(listOption('-k, --skip-urls <urls>', 'leave these urls / topics out'))
    .addOption(new Option('--format <ext>', 'dump format').choices(['vdb', 'vcap']).default('vdb'))
    .addOption(
      new Option('--max-dumps <n>', 'keep at most n auto-named dumps (0 = all)')
        .argParser(parseNonNegativeInteger)
        .default(10),
    )
    .addOption(
      new Option('--max-cache-size <MB>', 'memory for the rings (0 = unlimited)')
        .argParser(parseNonNegative)
        .default(2048),
    )
    .option('-p, --compress', 'compress the dumps (LZAV for .vdb, zstd for .vcap)')
    .addOption(
      new Option(
        '--http [[host:]port]',
        `accept POST /trigger (and GET /status) here; an address only as --http=[host:]port (default ${DEFAULT_TRIGGER_HTTP})`,
      ).argParser((v: string) => parseHostPort(v.trim() === '' ? DEFAULT_TRIGGER_HTTP : v)),
    )
    .option('--json', 'events as JSON lines on stdout: {"event":"listening"|"ready"|"dump"|"error", …}')
    .option('-q, --quiet', 'no status lines on stderr');
  command.action((dir: string, flags: TriggerFlags) => runDaemon(dir, flags));
  examples(command, [
    'vlink-bag trigger /data/dumps --from ws://robot:8765 --pre 30 --post 5 --http',
    'vlink-bag trigger /data/dumps --from rosbridge://robot:9090 -u /imu,/camera/image',
    'vlink-bag cat drive.vdb | vlink-bag trigger /tmp/dumps --stdin --pre 10',
    'kill -USR1 <pid>                              # dump now',
  ]);
  registerTriggerDump(command);
}

function registerTriggerDump(trigger: Command): void {
  const command = trigger
    .command('dump')
    .description('ask a running trigger daemon (trigger --http) for a dump and print its result')
    .addOption(
      new Option('--http <[host:]port>', 'the daemon')
        .argParser((v: string) => parseHostPort(v))
        .default(parseHostPort(DEFAULT_TRIGGER_HTTP), DEFAULT_TRIGGER_HTTP),
    )
    .option('--reason <text>', 'stored as the dump’s tag')
    .addOption(
      new Option('--pre <s>', 'seconds before the trigger (default: the daemon’s)').argParser(parseNonNegative),
    )
    .addOption(
      new Option('--post <s>', 'seconds after the trigger (default: the daemon’s)').argParser(parseNonNegative),
    )
    .option('-o, --out <file>', 'exact output path (never rotated)')
    .option('--json', 'print the dump result as JSON');
  command.action(
    async (flags: { http: HostPort; reason?: string; pre?: number; post?: number; out?: string; json?: boolean }) => {
      const daemon = flags.http;
      const host = daemon.host.includes(':') ? `[${daemon.host}]` : daemon.host;
      const url = `http://${host}:${daemon.port}/trigger`;
      const body = {
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
        ...(flags.pre !== undefined ? { pre: flags.pre } : {}),
        ...(flags.post !== undefined ? { post: flags.post } : {}),
        ...(flags.out !== undefined ? { out: flags.out } : {}),
      };
      let response: Response;
      try {
        response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
      } catch (error) {
        throw new CliError(`no trigger daemon answers: ${(error as Error).message}`, url);
      }
      const value = (await response.json()) as DumpResult & { error?: string };
      if (!response.ok) throw new CliError(`dump refused: ${value.error ?? response.statusText}`, url);
      if (flags.json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      else process.stdout.write(`${dumpLine(value)}\n`);
    },
  );
  examples(command, [
    'vlink-bag trigger dump --reason hard-brake',
    'vlink-bag trigger dump --http 127.0.0.1:9000 --json',
  ]);
}

function dumpLine(r: DumpResult): string {
  return `${r.file}: ${r.frames} frames (${formatSize(r.bytes)}) from ${r.urls} urls, ${(r.durationUs / 1e6).toFixed(3)} s${r.reason ? ` [${r.reason}]` : ''}`;
}

async function runDaemon(dir: string, flags: TriggerFlags): Promise<void> {
  if (!flags.stdin && !flags.from) throw usageError('trigger needs a source: --stdin or --from ws://… / rosbridge://…');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new CliError('is not a directory', dir);
  const recorder = new TriggerRecorder({
    dumpDir: dir,
    fileType: flags.format,
    defaultPreMs: Math.round(flags.pre * 1000),
    defaultPostMs: Math.round(flags.post * 1000),
    maxDumpFileCount: flags.maxDumps,
    maxCacheSize: Math.round(flags.maxCacheSize * 1024 * 1024),
    enableCompress: flags.compress === true,
    whitelist: flags.urls ?? [],
    blacklist: flags.skipUrls ?? [],
  });
  const event = (value: Record<string, unknown>) => {
    if (flags.json) process.stdout.write(`${JSON.stringify(value)}\n`);
  };
  const say = (text: string) => {
    if (!flags.quiet && !flags.json) process.stderr.write(`${text}\n`);
  };
  recorder.registerHooks({ onWarning: (message) => say(`warning: ${message}`) });
  const dumps: Array<Promise<unknown>> = [];
  const dump = (params: TriggerParams, via: string): Promise<DumpResult> => {
    const run = recorder.trigger({ reason: via, ...params });
    dumps.push(
      run.then(
        (result) => {
          event({ event: 'dump', via, ...result });
          if (!flags.json) process.stdout.write(`${dumpLine(result)}\n`);
        },
        (error: Error) => {
          event({ event: 'error', via, message: error.message });
          say(`vlink-bag trigger: dump (${via}) failed: ${error.message}`);
        },
      ),
    );
    return run;
  };
  const sink = new TriggerSink(recorder, say, (params) => void dump(paramsOf(params), 'stdin').catch(() => {}));
  recorder.start();

  const cleanups: Array<() => void> = [];
  const onSignal = (reason: string) => () => sink.stop(reason);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    const handler = onSignal('interrupted');
    process.once(signal, handler);
    cleanups.push(() => process.off(signal, handler));
  }
  if (process.platform !== 'win32') {
    const usr1 = () => void dump({}, 'SIGUSR1').catch(() => {});
    process.on('SIGUSR1', usr1);
    cleanups.push(() => process.off('SIGUSR1', usr1));
  }
  let http: Awaited<ReturnType<typeof listenTriggerHttp>> | undefined;
  try {
    if (flags.http) {
      http = await listenTriggerHttp(flags.http, {
        trigger: (body) => dump(paramsOf(body), 'http'),
        status: () => recorder.stats(),
      });
      event({ event: 'listening', url: http.url });
      say(
        `Trigger: POST ${http.url}/trigger (or vlink-bag trigger dump --http=${flags.http.host}:${new URL(http.url).port})`,
      );
    }
    // A terminal stdin (not the data) gives keys: Space dumps, q quits. A piped stdin gives one dump per line.
    if (!flags.stdin && process.stdin.isTTY && liveOutput(flags.quiet)) {
      cleanups.push(
        listenKeys((key) => {
          if (key === 'space') void dump({}, 'key').catch(() => {});
          else if (key === 'q' || key === 'escape' || key === 'ctrl-c') sink.stop('stopped by user');
        }),
      );
    } else if (!flags.stdin && !process.stdin.isTTY) {
      const { createInterface } = await import('node:readline');
      const lines = createInterface({ input: process.stdin });
      lines.on('line', (line) => void dump({ reason: line.trim() || 'stdin' }, 'stdin').catch(() => {}));
      cleanups.push(() => lines.close());
    }
    say(`Trigger daemon: keeping ${flags.pre} s before / ${flags.post} s after; dumps to ${dir} (SIGUSR1 dumps)`);
    event({ event: 'ready', pid: process.pid });
    const accept = urlPredicate(flags);
    if (flags.stdin) await recordFromStdin(sink, accept);
    else await (await import('../lib/live-source.js')).recordFromUrl(sink, flags.from!, accept, 'receive', flags.urls);
    if (!sink.isStopping) sink.stop('source ended');
    // Dumps already asked for are written before the daemon ends (their post window included).
    while (dumps.length > 0) await Promise.all(dumps.splice(0));
  } finally {
    for (const cleanup of cleanups.splice(0)) cleanup();
    await new Promise<void>((resolve) => (http ? http.server.close(() => resolve()) : resolve()));
    await recorder.quit();
  }
}

/** A trigger request (HTTP body or stdin trigger line) as core's TriggerParams: seconds → ms, our names → VLink's. */
export function paramsOf(body: Record<string, unknown>): TriggerParams {
  const params: TriggerParams = {};
  const seconds = (key: string) => {
    const v = body[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new CliError(`"${key}" must be seconds >= 0`);
    return Math.round(v * 1000);
  };
  const list = (key: string) => {
    const v = body[key];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
      throw new CliError(`"${key}" must be a list of urls`);
    return v as string[];
  };
  if (typeof body['reason'] === 'string') params.reason = body['reason'];
  if (typeof body['out'] === 'string') params.outFile = body['out'];
  const pre = seconds('pre');
  const post = seconds('post');
  if (pre !== undefined) params.preMs = pre;
  if (post !== undefined) params.postMs = post;
  const urls = list('urls');
  const skip = list('skipUrls');
  if (urls) params.whitelist = urls;
  if (skip) params.blacklist = skip;
  return params;
}
