import { InvalidArgumentError } from 'commander';

/**
 * Argument parsers for commander. Each throws `InvalidArgumentError`, which commander turns into one line naming the
 * flag and the value, e.g. `option '-r, --rate <x>' argument '500' is invalid. must be between 0.01 and 100`.
 */

/** A decimal number as people write one (`1.5`, `-2`, `.5`, `1e3`): `Number` also reads `0x10` as 16 and `0b1` as 1. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function finite(value: string): number {
  const trimmed = value.trim();
  const n = DECIMAL.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isFinite(n)) throw new InvalidArgumentError('not a number');
  return n;
}

/** A parser of the numbers `base` reads that `ok` accepts; `rule` is the error's text for the others. */
function numbers(ok: (n: number) => boolean, rule: string, base = finite): (value: string) => number {
  return (value) => {
    const n = base(value);
    if (!ok(n)) throw new InvalidArgumentError(rule);
    return n;
  };
}

/** Seconds (>= 0, fractions allowed), e.g. `-b 1.5`. */
export const parseSeconds = numbers((n) => n >= 0, 'must be >= 0 seconds');
/** A non-negative number, e.g. a size in GB or MB. */
export const parseNonNegative = numbers((n) => n >= 0, 'must be >= 0');
export const parsePositive = numbers((n) => n > 0, 'must be > 0');
/** Any integer (negative allowed), e.g. `-t 0` for endless playback. */
export const parseInteger = numbers(Number.isInteger, 'must be an integer');
export const parseNonNegativeInteger = numbers((n) => n >= 0, 'must be an integer >= 0', parseInteger);
/** Playback rate, VLink's range 0.01–100. */
export const parseRate = numbers((n) => n >= 0.01 && n <= 100, 'must be between 0.01 and 100');
/** LZAV/zstd level: 1–5 (0 = the default, 3). */
export const parseCompressLevel = numbers(
  (n) => n >= 0 && n <= 5,
  'must be an integer between 0 and 5 (0 = default)',
  parseInteger,
);

export const COMPRESS_CHOICES = ['none', 'auto', 'zstd', 'lzav'] as const;
export type CompressChoice = (typeof COMPRESS_CHOICES)[number];

/** `-p` alone (`--compress=` after argv normalisation) means `auto` (VLink's `-p` switch); `-p lzav` picks one. */
export function parseCompressChoice(value: string): CompressChoice {
  const v = value.trim().toLowerCase() || 'auto';
  if (!(COMPRESS_CHOICES as readonly string[]).includes(v)) {
    throw new InvalidArgumentError(`must be one of ${COMPRESS_CHOICES.join(', ')}`);
  }
  return v as CompressChoice;
}

/** Collects a repeatable or variadic string option into one list. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export interface HostPort {
  host: string;
  port: number;
}

/** `[host:]port`; `[::1]:8765` for IPv6. The host defaults to 127.0.0.1. */
export function parseHostPort(value: string, defaultHost = '127.0.0.1'): HostPort {
  const text = value.trim();
  let host = defaultHost;
  let portText = text;
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  if (bracket) {
    host = bracket[1]!;
    portText = bracket[2]!;
  } else if (text.includes(':')) {
    const colon = text.lastIndexOf(':');
    host = text.slice(0, colon) || defaultHost;
    portText = text.slice(colon + 1);
  }
  return { host, port: parsePort(portText) };
}

export function parsePort(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('must be a port number (0-65535)');
  const port = Number(value);
  if (port > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return port;
}

/** A live source for `record --from` / `trigger --from`: `ws://`/`wss://` (Foxglove WebSocket) or `rosbridge://host:port`. */
export function parseSourceUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a url such as ws://127.0.0.1:8765 or rosbridge://127.0.0.1:9090');
  }
  if (!['ws:', 'wss:', 'rosbridge:', 'rosbridge+wss:'].includes(url.protocol))
    throw new InvalidArgumentError('must be a ws://, wss:// (Foxglove WebSocket) or rosbridge:// url');
  if (url.protocol.startsWith('rosbridge') && !url.port)
    throw new InvalidArgumentError('rosbridge:// needs a port (9090 usually)');
  return url.toString();
}
