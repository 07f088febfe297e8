import type { Structure } from './data-structure.js';

/**
 * Whether a JSON payload's own bytes may go to the write-out's `json_transform` as they are: true only when
 * `json_transform(bytes, structure)` gives exactly what the export gives through `JSON.parse` (the typed writer, or
 * `json_transform(JSON.stringify(…))`), so the row needs no work on the JavaScript thread but the payload copy it
 * gets anyway; DuckDB decodes it in C++ on its own thread during the `COPY`. Anything this check does not accept
 * takes the `JSON.parse` path, so it only has to be right when it says yes, and cheap (one pass over the bytes).
 */
export type RawJsonCheck = (payload: Uint8Array) => boolean;

/**
 * A leaf of the structure, or an object's fields (by their UTF-8 names) and, for each, the number of the last object
 * read that had it.
 */
type Shape = 'DOUBLE' | 'VARCHAR' | 'BOOLEAN' | ObjectShape;
interface ObjectShape {
  names: Uint8Array[];
  fields: Shape[];
  seen: number[];
}

const encoder = new TextEncoder();

/**
 * The check of a url's structure, or undefined when it has lists or `JSON` leaves (whose JSON text DuckDB writes back
 * in its own number and escape style, not JSON.stringify's) or a field name JSON would have to escape.
 *
 * It accepts a top-level object with JSON whitespace around it whose keys are all fields of the structure, each once
 * (JSON.parse keeps the last of duplicate keys, DuckDB's reader would not), and whose values have the JSON type of
 * their field or are null: a DOUBLE field takes a number in JSON's strict grammar (DuckDB's reader also takes NaN,
 * `1.`, trailing commas …) of at most 24 characters with a 1- or 2-digit exponent (no overflow to ±Infinity or
 * underflow to 0, which JSON.stringify writes as null and 0) and not a negative zero (JSON.stringify writes 0); both
 * sides round the decimal text to the nearest double. A VARCHAR field takes a string of valid UTF-8 (TextDecoder
 * would reject or DuckDB's `decode` fail otherwise) whose escapes are the one-letter ones: a `\u` escape may be a
 * lone surrogate or a NUL, which the export replaces or stages as text. A BOOLEAN field takes true or false, an
 * object field an object checked the same way. A missing field is NULL both ways.
 */
export function rawJsonCheck(structure: Structure): RawJsonCheck | undefined {
  const root = shapeOf(structure);
  if (root === undefined || typeof root === 'string') return undefined;
  const scanner = new Scanner(root);
  return (payload) => scanner.accepts(payload);
}

function shapeOf(structure: Structure): Shape | undefined {
  if (structure === 'DOUBLE' || structure === 'VARCHAR' || structure === 'BOOLEAN') return structure;
  if (typeof structure === 'string' || Array.isArray(structure)) return undefined;
  const names: Uint8Array[] = [];
  const fields: Shape[] = [];
  for (const [name, field] of Object.entries(structure)) {
    // Only names JSON writes unescaped (no quote, backslash, control character or lone surrogate).
    if (JSON.stringify(name) !== `"${name}"`) return undefined;
    const shape = shapeOf(field);
    if (shape === undefined) return undefined;
    names.push(encoder.encode(name));
    fields.push(shape);
  }
  return { names, fields, seen: names.map(() => -1) };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const MAX_NUMBER_LENGTH = 24;
/** The one-letter escapes: `"` `\` `/` b f n r t. */
const SIMPLE_ESCAPE = new Uint8Array(128);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/**
 * A one-pass recursive-descent reader over the bytes, following the structure (it has no lists, so the recursion is
 * as deep as the structure). Plain functions over (bytes, position), each returning the position after what it read
 * or -1: the check runs for every JSON message, so it stays free of allocations and property lookups.
 */
class Scanner {
  constructor(private readonly root: ObjectShape) {}

  accepts(bytes: Uint8Array): boolean {
    const end = bytes.length;
    let pos = space(bytes, 0, end);
    if (bytes[pos] !== OPEN) return false;
    pos = object(bytes, pos, end, this.root);
    return pos >= 0 && space(bytes, pos, end) === end;
  }
}

/** Numbers each object read, so a field seen twice in one object is noticed without clearing anything. */
let visits = 0;

function space(bytes: Uint8Array, pos: number, end: number): number {
  while (pos < end) {
    const c = bytes[pos]!;
    if (c > 0x20 || (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09)) break;
    pos++;
  }
  return pos;
}

/** The object at `pos` (its `{`). */
function object(bytes: Uint8Array, pos: number, end: number, shape: ObjectShape): number {
  pos = space(bytes, pos + 1, end);
  if (bytes[pos] === CLOSE) return pos + 1;
  const visit = ++visits;
  const { names, fields, seen } = shape;
  let expected = 0;
  for (;;) {
    if (bytes[pos] !== QUOTE) return -1;
    pos++;
    // Messages of a url usually list the fields in one order: the next field's name is tried first.
    let field = -1;
    if (expected < names.length) {
      const name = names[expected]!;
      const length = name.length;
      if (pos + length < end && bytes[pos + length] === QUOTE) {
        let i = 0;
        while (i < length && bytes[pos + i] === name[i]) i++;
        if (i === length) {
          field = expected;
          pos += length + 1;
        }
      }
    }
    if (field < 0) {
      field = key(bytes, pos, end, names);
      if (field < 0) return -1;
      pos += names[field]!.length + 1;
    }
    if (seen[field] === visit) return -1;
    seen[field] = visit;
    expected = field + 1;
    pos = space(bytes, pos, end);
    if (bytes[pos] !== COLON) return -1;
    pos = space(bytes, pos + 1, end);
    pos = value(bytes, pos, end, fields[field]!);
    if (pos < 0) return -1;
    pos = space(bytes, pos, end);
    const c = bytes[pos];
    if (c === CLOSE) return pos + 1;
    if (c !== COMMA) return -1;
    pos = space(bytes, pos + 1, end);
  }
}

/** The index of the field whose name is the key at `pos` (after its opening quote), or -1. */
function key(bytes: Uint8Array, pos: number, end: number, names: readonly Uint8Array[]): number {
  let close = pos;
  while (close < end) {
    const c = bytes[close]!;
    if (c === QUOTE) break;
    // Names are unescaped text (see shapeOf); a key with an escape or a control byte is not one of them.
    if (c === BACKSLASH || c < 0x20) return -1;
    close++;
  }
  if (close >= end) return -1;
  const length = close - pos;
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!;
    if (name.length !== length) continue;
    let i = 0;
    while (i < length && name[i] === bytes[pos + i]) i++;
    if (i === length) return index;
  }
  return -1;
}

function value(bytes: Uint8Array, pos: number, end: number, shape: Shape): number {
  const c = bytes[pos];
  if (c === 0x6e) return literal(bytes, pos, end, NULL);
  if (shape === 'DOUBLE') return number(bytes, pos, end);
  if (shape === 'VARCHAR') return c === QUOTE ? string(bytes, pos + 1, end) : -1;
  if (shape === 'BOOLEAN') return literal(bytes, pos, end, c === 0x74 ? TRUE : FALSE);
  return c === OPEN ? object(bytes, pos, end, shape) : -1;
}

const NULL = encoder.encode('null');
const TRUE = encoder.encode('true');
const FALSE = encoder.encode('false');

function literal(bytes: Uint8Array, pos: number, end: number, word: Uint8Array): number {
  if (pos + word.length > end) return -1;
  for (let i = 0; i < word.length; i++) if (bytes[pos + i] !== word[i]) return -1;
  return pos + word.length;
}

/** A number in JSON's grammar, short, not overflowing or underflowing, and not a negative zero (see rawJsonCheck). */
function number(bytes: Uint8Array, start: number, end: number): number {
  let pos = start;
  const negative = bytes[pos] === MINUS;
  if (negative) pos++;
  let nonZero = false;
  let c = bytes[pos];
  if (c === ZERO) pos++;
  else if (c !== undefined && c > ZERO && c <= NINE) {
    nonZero = true;
    pos++;
    while (pos < end && isDigit(bytes[pos]!)) pos++;
  } else return -1;
  if (bytes[pos] === DOT) {
    pos++;
    const digits = pos;
    while (pos < end) {
      c = bytes[pos]!;
      if (!isDigit(c)) break;
      if (c !== ZERO) nonZero = true;
      pos++;
    }
    if (pos === digits) return -1;
  }
  c = bytes[pos];
  if (c === 0x65 || c === 0x45) {
    pos++;
    c = bytes[pos];
    if (c === PLUS || c === MINUS) pos++;
    const digits = pos;
    while (pos < end && isDigit(bytes[pos]!)) pos++;
    if (pos === digits || pos - digits > 2) return -1;
  }
  if (pos - start > MAX_NUMBER_LENGTH || (negative && !nonZero)) return -1;
  return pos;
}

/** A string (from after its opening quote) of valid UTF-8 with one-letter escapes only (see rawJsonCheck). */
function string(bytes: Uint8Array, pos: number, end: number): number {
  while (pos < end) {
    const c = bytes[pos++]!;
    if (c === QUOTE) return pos;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const e = bytes[pos++];
      if (e === undefined || e >= 0x80 || SIMPLE_ESCAPE[e] !== 1) return -1;
    } else if (c >= 0x80) {
      pos = utf8Sequence(bytes, pos - 1, end);
      if (pos < 0) return -1;
    }
  }
  return -1;
}

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
const isContinuation = (c: number | undefined): boolean => c !== undefined && (c & 0xc0) === 0x80;

/**
 * The end of the well-formed UTF-8 sequence at `pos` (its lead byte ≥ 0x80), or -1: no overlong forms, surrogates or
 * code points past U+10FFFF, as TextDecoder's fatal mode and DuckDB's UTF-8 check both require.
 */
function utf8Sequence(bytes: Uint8Array, pos: number, end: number): number {
  const c = bytes[pos]!;
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) length = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c === 0xe0) low = 0xa0;
    else if (c === 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c === 0xf0) low = 0x90;
    else if (c === 0xf4) high = 0x8f;
  } else return -1;
  if (pos + length > end) return -1;
  const second = bytes[pos + 1]!;
  if (second < low || second > high) return -1;
  for (let i = 2; i < length; i++) if (!isContinuation(bytes[pos + i])) return -1;
  return pos + length;
}
