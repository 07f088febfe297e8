import { InvalidArgumentError, Option, type Command } from 'commander';
import { ActionType, actionText, type Frame } from '@vlink/bag';
import { usageError } from './errors.js';
import { listOption } from './list-option.js';
import { parseSeconds } from './parse.js';
import { isDatetime, parseDatetimeMs } from './wall-time.js';

/** A window bound: seconds since the recording start, or a wall-clock instant (ms since the epoch). */
export type TimePoint = { seconds: number } | { wallMs: number; text: string };

/**
 * The play-style filters shared by cat, play, clone, merge and split: urls (exact, by keyword), actions and a time
 * window. Bounds come from `-b/-e` (seconds, or an Apollo-style datetime in local time) or VLink's
 * `--rel/local/utc-begin/end-time`; at most one of each.
 */
export interface FilterFlags {
  urls?: string[];
  skipUrls?: string[];
  filter?: string[];
  actions?: ActionType[];
  begin?: TimePoint;
  end?: TimePoint;
  relBeginTime?: number;
  relEndTime?: number;
  localBeginTime?: TimePoint;
  localEndTime?: TimePoint;
  utcBeginTime?: TimePoint;
  utcEndTime?: TimePoint;
}

/** `-b 1.5` (seconds) or `-b "2026-03-17 10:00:05"` (Apollo: a local datetime). */
export function parseTimePoint(value: string): TimePoint {
  if (isDatetime(value)) return { wallMs: parseDatetimeMs(value, false), text: value };
  return { seconds: parseSeconds(value) };
}

const wallParser = (utc: boolean) => (value: string) => ({ wallMs: parseDatetimeMs(value, utc), text: value });

const ACTION_NAMES = new Map<string, ActionType>([
  ...Array.from({ length: 9 }, (_, i) => [actionText(i as ActionType).toLowerCase(), i as ActionType] as const),
  ['publish', ActionType.Publish],
  ['subscribe', ActionType.Subscribe],
  ['client-request', ActionType.ClientRequest],
  ['client-response', ActionType.ClientResponse],
  ['server-request', ActionType.ServerRequest],
  ['server-response', ActionType.ServerResponse],
]);

/** `-s Pub,Sub` / `-s 5`: VLink's action texts (any case), long names (`publish`) or the integers 0–8. */
export function parseActions(value: string, previous: ActionType[] | undefined): ActionType[] {
  const out = [...(previous ?? [])];
  for (const item of value.split(',').map((text) => text.trim().toLowerCase())) {
    if (item === '') continue;
    const action = /^[0-8]$/.test(item) ? (Number(item) as ActionType) : ACTION_NAMES.get(item);
    if (action === undefined)
      throw new InvalidArgumentError('actions are Pub, Sub, Set, Get, C/Req, C/Resp, S/Req, S/Resp, Unknown or 0-8');
    out.push(action);
  }
  return out;
}

export function addFilterOptions(command: Command): Command {
  return command
    .addOption(listOption('-u, --urls <urls>', 'only these urls (exact match; default: all)'))
    .addOption(listOption('-k, --skip-urls <urls>', 'leave these urls out (exact match)'))
    .addOption(listOption('-i, --filter <keywords>', 'only urls containing one of these keywords (VLink -i)'))
    .addOption(
      new Option(
        '-s, --actions <actions>',
        'only these actions: Pub, Sub, Set, Get, C/Req, … (comma-separated)',
      ).argParser(parseActions),
    )
    .addOption(
      new Option('-b, --begin <time>', 'window start: seconds since recording start, or a local datetime').argParser(
        parseTimePoint,
      ),
    )
    .addOption(
      new Option('-e, --end <time>', 'window end (inclusive; 0 = to the end): seconds or a local datetime').argParser(
        parseTimePoint,
      ),
    )
    .addOption(new Option('--rel-begin-time <s>', 'window start in seconds (VLink)').argParser(parseSeconds))
    .addOption(new Option('--rel-end-time <s>', 'window end in seconds (VLink)').argParser(parseSeconds))
    .addOption(new Option('--local-begin-time <datetime>', 'window start, local time').argParser(wallParser(false)))
    .addOption(new Option('--local-end-time <datetime>', 'window end, local time').argParser(wallParser(false)))
    .addOption(new Option('--utc-begin-time <datetime>', 'window start, UTC').argParser(wallParser(true)))
    .addOption(new Option('--utc-end-time <datetime>', 'window end, UTC').argParser(wallParser(true)));
}

/** What a window is resolved against: the recording start (ms since the epoch) and its length (ms). */
export interface Timeline {
  startTimestamp: number;
  totalDuration: number;
}

/**
 * The window in ms relative to the recording start, as the reader takes it (`beginTime`, `endTime`; 0 = open).
 * Errors (exit 2): two sources for one bound, an end before the begin, a begin past the end of the recording (VLink:
 * "Invalid time"), an end before the recording starts.
 */
export function windowMs(flags: FilterFlags, timeline: Timeline): { beginTime: number; endTime: number } {
  const begin = pick('begin', [
    ['-b/--begin', flags.begin],
    ['--rel-begin-time', flags.relBeginTime === undefined ? undefined : { seconds: flags.relBeginTime }],
    ['--local-begin-time', flags.localBeginTime],
    ['--utc-begin-time', flags.utcBeginTime],
  ]);
  const end = pick('end', [
    ['-e/--end', flags.end],
    ['--rel-end-time', flags.relEndTime === undefined ? undefined : { seconds: flags.relEndTime }],
    ['--local-end-time', flags.localEndTime],
    ['--utc-end-time', flags.utcEndTime],
  ]);
  const relative = (point: TimePoint) =>
    'seconds' in point ? Math.round(point.seconds * 1000) : point.wallMs - timeline.startTimestamp;
  const show = (point: TimePoint) => ('seconds' in point ? `${point.seconds} s` : point.text);
  const beginTime = begin ? Math.max(0, relative(begin[1])) : 0;
  const endTime = end ? relative(end[1]) : 0;
  const length = `the recording is ${(timeline.totalDuration / 1000).toFixed(3)} s long`;
  if (begin && beginTime > timeline.totalDuration)
    throw usageError(`Invalid time: ${begin[0]} ${show(begin[1])} is past the end of the recording (${length})`);
  if (end && 'wallMs' in end[1] && endTime <= 0)
    throw usageError(`Invalid time: ${end[0]} ${show(end[1])} is before the recording starts`);
  if (end && endTime > 0 && endTime < beginTime)
    throw usageError(
      `Invalid time: ${end[0]} (${show(end[1])}) is before the window start (${begin ? show(begin[1]) : '0 s'})`,
    );
  return { beginTime, endTime: Math.max(0, endTime) };
}

function pick(
  which: string,
  sources: ReadonlyArray<readonly [string, TimePoint | undefined]>,
): readonly [string, TimePoint] | undefined {
  const given = sources.filter((source): source is readonly [string, TimePoint] => source[1] !== undefined);
  if (given.length > 1)
    throw usageError(`the window ${which} is given twice (${given.map((g) => g[0]).join(' and ')})`);
  return given[0];
}

/** The `-s/--actions` filter as a frame predicate (undefined = every action). */
export function actionPredicate(actions: readonly ActionType[] | undefined): ((frame: Frame) => boolean) | undefined {
  if (!actions || actions.length === 0) return undefined;
  const keep = new Set(actions);
  return (frame) => keep.has(frame.actionType);
}

/** Adds an "Examples:" section to a verb's help. */
export function examples(command: Command, lines: readonly string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  ${line}`).join('\n')}\n`);
}
