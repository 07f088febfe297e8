import { Option, type Command } from 'commander';
import { actionText, type BagReader, type Frame, type Info, type SchemaData } from '@vlink/bag';
import { openBag } from '../lib/bag-io.js';
import {
  addRecoveryOption,
  readAroundWarnings,
  type RecoveryFlags,
  recoveryReaderOptions,
} from '../lib/recovery-flag.js';
import type { Decoded, PayloadDecoder } from '@vlink/bag-decode';
import { actionPredicate, addFilterOptions, examples, windowMs, type FilterFlags } from '../lib/filter-flags.js';
import { formatSeconds, formatSize } from '../lib/format.js';
import { toBase64 } from '@vlink/bag-decode/frames';
import { frameLine, metaLine, schemaLine } from '../lib/ndjson.js';
import { exitQuietlyOnEpipe, FrameOutput, LineOutput, printWarnings } from '../lib/output.js';
import { usageError } from '../lib/errors.js';
import { cursorFrames } from '../lib/read.js';
import { liveOutput, Progress } from '../lib/progress.js';
import { bagUrls, selectUrls, warnSelection } from '../lib/url-filter.js';
import { formatWallTime } from '../lib/wall-time.js';

type Format = 'ndjson' | 'csv' | 'text' | 'binary';

interface CatFlags extends FilterFlags, RecoveryFlags {
  format: Format;
  json?: boolean;
  decode?: boolean;
  jsonNames?: boolean;
  meta?: boolean;
  localTime?: boolean;
  utcTime?: boolean;
  quiet?: boolean;
}

export function registerCat(program: Command): void {
  const command = program
    .command('cat')
    .description('write the frames of a bag to stdout (NDJSON, CSV, text or binary frames)')
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .addOption(
      new Option(
        '--format <format>',
        "output format; binary: the server's binary frame layout (GET …/messages?format=binary), to a file or pipe",
      )
        .choices(['ndjson', 'csv', 'text', 'binary'])
        .default('ndjson'),
    )
    .addOption(new Option('--json', 'NDJSON, one frame object per line (same as --format ndjson)').conflicts('format'))
    .option(
      '--decode',
      'add each payload as JSON: protobuf, ROS 1, CDR and ULog via the embedded schemas, JSON and text payloads as is',
    )
    .addOption(
      new Option(
        '--json-names',
        'with --decode (implied): protobuf fields by their JSON name (json_name, else lowerCamelCase), not the .proto name',
      ).implies({ decode: true }),
    )
    .option('--meta', 'NDJSON only: start with a {"meta":…} line and one {"schema":…} line per embedded schema')
    .addOption(new Option('--local-time', 'text: wall-clock local time instead of seconds since the start'))
    .addOption(
      new Option('--utc-time', 'text: wall-clock UTC instead of seconds since the start').conflicts('localTime'),
    )
    .option('-q, --quiet', 'no warnings and no progress bar on stderr');
  addRecoveryOption(command);
  addFilterOptions(command).action(async (path: string, flags: CatFlags) => {
    if (flags.json) flags.format = 'ndjson';
    if (flags.format === 'binary') {
      // Checked before the bag is opened: nothing is read for a command that cannot run.
      if (flags.decode)
        throw usageError('--decode is not available with --format binary (the payloads go out as they are)');
      if (process.stdout.isTTY === true)
        throw usageError('--format binary writes bytes, not text: redirect stdout to a file or a pipe');
    }
    const reader = await openBag(path, recoveryReaderOptions(flags));
    try {
      exitQuietlyOnEpipe();
      const info = reader.getInfo();
      const selection = selectUrls(bagUrls(info), flags);
      const window = windowMs(flags, info);
      warnSelection('cat', path, selection, flags.quiet);
      printWarnings('cat', path, readAroundWarnings(flags, info), flags.quiet);
      const keepAction = actionPredicate(flags.actions);
      // A bar only when the frames go to a file or pipe and stderr is a terminal (never over the frames themselves).
      const progress = new Progress(liveOutput(flags.quiet) && process.stdout.isTTY !== true, 'cat');
      const decoder = flags.decode
        ? await payloadDecoder(reader.getInfo(), reader.getSchemas(), flags.jsonNames === true)
        : undefined;
      const out = flags.format === 'binary' ? new FrameOutput() : lineSink(flags.format, flags, info, reader, decoder);
      try {
        if (!selection.none) {
          const config = { ...window, ...(selection.filterUrls ? { filterUrls: selection.filterUrls } : {}) };
          const endMs = window.endTime > 0 ? Math.min(window.endTime, info.totalDuration) : info.totalDuration;
          progress.start(Math.max(1, endMs - window.beginTime));
          let frames = 0;
          for (const frame of cursorFrames(reader, config)) {
            if (keepAction && !keepAction(frame)) continue;
            const pending = out.write(frame);
            if ((++frames & 1023) === 0) progress.update(frame.timestamp / 1000 - window.beginTime, frames);
            if (pending) await pending;
          }
          progress.update(endMs - window.beginTime, frames);
        }
      } finally {
        // The frames read before a failure (damage further on in the bag) are good ones: they go out before the
        // error is reported, not lost in the output buffer.
        progress.stop();
        await out.end();
      }
    } finally {
      reader.close();
    }
  });
  examples(command, [
    'vlink-bag cat /tmp/bag.vdb | head -3',
    'vlink-bag cat /tmp/bag.vdb --format text --decode -u dds://imu,dds://gps',
    'vlink-bag cat /tmp/bag.vdb --format text -i camera -s Pub --utc-time',
    'vlink-bag cat /tmp/bag.vcap --format csv -b 10 -e 20 > frames.csv',
    'vlink-bag cat /tmp/bag.vcap --format binary -u dds://camera > camera.frames',
    'vlink-bag cat /tmp/bag.vdb --meta | vlink-bag record --stdin /tmp/copy.vcap',
  ]);
}

const CSV_HEADER = 'timestamp,publishTime,url,action,serType,schemaType,size,data';

/** Where `cat` sends the frames it reads. */
interface FrameSink {
  /** A promise when the caller should wait (stdout is full). */
  write(frame: Frame): Promise<void> | undefined;
  end(): Promise<void>;
}

/** The text formats: their header lines at once (CSV's header, NDJSON's `--meta` lines), then a line per frame. */
function lineSink(
  format: Exclude<Format, 'binary'>,
  flags: CatFlags,
  info: Info,
  reader: Pick<BagReader, 'getSchemas'>,
  decoder: PayloadDecoder | undefined,
): FrameSink {
  const out = new LineOutput();
  if (format === 'ndjson' && flags.meta) {
    out.write(metaLine(info));
    // Asked only here: of a split recording it opens every segment (a window reads only those it overlaps).
    for (const schema of reader.getSchemas()) out.write(schemaLine(schema));
  }
  if (format === 'csv') out.write(`${CSV_HEADER + (decoder ? ',decoded' : '')}\n`);
  const clock =
    flags.localTime || flags.utcTime
      ? (us: number) => formatWallTime(info.startTimestamp + us / 1000, flags.utcTime === true)
      : formatSeconds;
  const render = renderer(format, decoder, clock);
  return { write: (frame) => out.write(render(frame)), end: () => out.end() };
}

/**
 * `@vlink/bag-decode`, the decoder the server and the web player use, loaded only with `--decode` (it brings the
 * protobuf and ROS libraries). Raw payloads that are UTF-8 print as text: a terminal reader wants the line, not its
 * bytes.
 */
async function payloadDecoder(info: Info, schemas: readonly SchemaData[], jsonNames: boolean): Promise<PayloadDecoder> {
  const { PayloadDecoder } = await import('@vlink/bag-decode');
  return new PayloadDecoder({ schemas, urls: info.urls, rawAsText: true, jsonNames });
}

function renderer(
  format: Exclude<Format, 'binary'>,
  decoder: PayloadDecoder | undefined,
  clock: (us: number) => string,
): (frame: Frame) => string {
  const decode = (frame: Frame): Decoded | undefined => decoder?.decode(frame);
  // Why a payload that looked decodable was not, as the server says it. A Raw payload shown as text when it is UTF-8
  // (`rawAsText`) was never expected to decode: binary bytes there are no error.
  const whyNot = (frame: Frame, decoded: Decoded): string | undefined =>
    decoded.kind === 'hex' && decoder?.encodingOf(frame) !== 'raw' ? decoded.reason : undefined;
  switch (format) {
    case 'ndjson':
      return (frame) => {
        const decoded = decode(frame);
        if (!decoded) return frameLine(frame);
        if (decoded.kind !== 'hex') return frameLine(frame, { value: decoded.value });
        const error = whyNot(frame, decoded);
        return frameLine(frame, error === undefined ? { value: null } : { value: null, error });
      };
    case 'csv':
      return (frame) => {
        const cells = [
          String(frame.timestamp),
          frame.publishTime === undefined ? '' : String(frame.publishTime),
          csvCell(frame.url),
          csvCell(actionText(frame.actionType)),
          csvCell(frame.serType),
          String(frame.schemaType),
          String(frame.data.byteLength),
          toBase64(frame.data),
        ];
        const decoded = decode(frame);
        if (decoded) cells.push(decoded.kind === 'hex' ? '' : csvCell(JSON.stringify(decoded.value)));
        return `${cells.join(',')}\n`;
      };
    case 'text':
      return (frame) => {
        const decoded = decode(frame);
        const error = decoded && whyNot(frame, decoded);
        const why = error ? `  (not decoded: ${error})` : '';
        const payload =
          decoded && decoded.kind !== 'hex' ? JSON.stringify(decoded.value) : hexPreview(frame.data) + why;
        return `${clock(frame.timestamp)}  ${frame.url}  ${actionText(frame.actionType)}  ${formatSize(frame.data.byteLength)}  ${frame.serType || '-'}  ${payload}\n`;
      };
  }
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function hexPreview(data: Uint8Array, max = 24): string {
  if (data.byteLength === 0) return '(empty)';
  const hex = Buffer.from(data.buffer, data.byteOffset, Math.min(max, data.byteLength))
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
  return data.byteLength > max ? `${hex} …` : hex;
}
