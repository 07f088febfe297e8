import { crc32 } from '../mcap/crc32.js';

/**
 * vlink-bag's one key beyond VLink's in a `.vcap` VLinkHeader (format reference §5.6): the CRC-32 of the header's other
 * entries. The header is a Metadata record outside every chunk, so no chunk CRC covers it, and only a read of the
 * whole data section (the data section CRC) would notice a damaged byte in it. Yet every frame's time is its log time
 * minus the header's `start_timestamp`: one garbled digit moved every frame of a recording by a millisecond or a day,
 * and the file still read as sound (found by fuzzing, `.vcap` seeds 55, 62; `.vcapx` seed 52). VLink's reader
 * ignores keys it does not know; a header without the key (VLink's files, ours before it) is taken as it is.
 */
export const HEADER_CRC_KEY = 'header_crc32';

const encoder = new TextEncoder();

/**
 * The CRC-32 of `entries` but {@link HEADER_CRC_KEY}: `key=value\n` for each, keys in code point order, as UTF-8; in
 * decimal.
 */
export function headerCrc(entries: Iterable<readonly [string, string]>): string {
  const lines = [...entries]
    .filter(([key]) => key !== HEADER_CRC_KEY)
    .sort(([a], [b]) => byCodePoint(a, b))
    .map(([key, value]) => `${key}=${value}\n`);
  return String(crc32(encoder.encode(lines.join(''))));
}

/**
 * Code point order: the order of the keys' UTF-8 bytes and of Python's `sorted` (the Python client computes the same
 * CRC). JavaScript's `<` compares UTF-16 code units, which puts a key beyond U+FFFF before one in U+E000–U+FFFF.
 */
function byCodePoint(a: string, b: string): number {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

/** `entries` with their {@link HEADER_CRC_KEY} entry appended (replacing one they had). */
export function withHeaderCrc(entries: Array<[string, string]>): Array<[string, string]> {
  const own = entries.filter(([key]) => key !== HEADER_CRC_KEY);
  return [...own, [HEADER_CRC_KEY, headerCrc(own)]];
}

/** Whether a header's values are the ones written: true or false by its CRC, undefined when it has none to say. */
export function headerIntact(header: ReadonlyMap<string, string>): boolean | undefined {
  const stored = header.get(HEADER_CRC_KEY);
  if (stored === undefined) return undefined;
  return stored === headerCrc(header);
}
