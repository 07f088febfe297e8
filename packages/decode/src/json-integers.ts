import { parse } from 'lossless-json';

/**
 * JSON text with integers past ±(2^53 − 1) (ids, nanosecond stamps): `JSON.parse` would round them to other integers
 * without a word, so they are kept exact as decimal strings, as every other decoder here gives 64-bit integers too
 * (plain-value.ts, the proto3 JSON mapping). `lossless-json` reads the literal's text; it is slower than `JSON.parse`,
 * so only text that holds such an integer comes here (scanJson). Other numbers are what `JSON.parse` makes of them.
 */
export function parseJsonKeepingIntegers(text: string): unknown {
  return parse(text, null, (literal) => {
    const n = Number(literal);
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(literal) ? n : literal;
  });
}
