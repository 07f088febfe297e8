import type { Structure } from './data-structure.js';

/**
 * Whether a JSON payload's own bytes may go to the write-out's `json_transform` as they are: true only when
 * `json_transform(bytes, structure)` gives exactly what the export gives through `JSON.parse` (the typed writer, or
 * `json_transform(JSON.stringify(…))`), so the row needs no work on the JavaScript thread but the payload copy it
 * gets anyway; DuckDB decodes it in C++ on its own thread during the `COPY`. Anything this check does not accept
 * takes the `JSON.parse` path, so it only has to be right when it says yes, and cheap (one pass over the bytes).
 */
export type RawJsonCheck = (payload: Uint8Array) => boolean;

/** A leaf of the structure, or an object's fields (by their UTF-8 names) and the last message that had each. */
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

/** A one-pass recursive-descent reader over the bytes, following the structure (it has no lists, so no recursion). */
class Scanner {
  private bytes: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private end = 0;
  /** Numbers each object visited, so a field seen twice in one object is noticed without clearing anything. */
  private visit = 0;

  constructor(private readonly root: ObjectShape) {}

  accepts(bytes: Uint8Array): boolean {
    this.bytes = bytes;
    this.pos = 0;
    this.end = bytes.length;
    this.space();
    if (!this.object(this.root)) return false;
    this.space();
    return this.pos === this.end;
  }

  private space(): void {
    const bytes = this.bytes;
    let pos = this.pos;
    while (pos < this.end) {
      const c = bytes[pos]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private object(shape: ObjectShape): boolean {
    if (this.bytes[this.pos] !== OPEN) return false;
    this.pos++;
    const visit = ++this.visit;
    this.space();
    if (this.bytes[this.pos] === CLOSE) {
      this.pos++;
      return true;
    }
    let expected = 0;
    for (;;) {
      const field = this.key(shape, expected);
      if (field < 0 || shape.seen[field] === visit) return false;
      shape.seen[field] = visit;
      expected = field + 1;
      this.space();
      if (this.bytes[this.pos] !== COLON) return false;
      this.pos++;
      this.space();
      if (!this.value(shape.fields[field]!)) return false;
      this.space();
      const c = this.bytes[this.pos++];
      if (c === CLOSE) return true;
      if (c !== COMMA) return false;
      this.space();
    }
  }

  /** The index of the field whose name the key at `pos` is (tried first: the one after the last), or -1. */
  private key(shape: ObjectShape, expected: number): number {
    const bytes = this.bytes;
    if (bytes[this.pos] !== QUOTE) return -1;
    const start = this.pos + 1;
    let pos = start;
    while (pos < this.end) {
      const c = bytes[pos]!;
      if (c === QUOTE) break;
      // Names are unescaped text (see shapeOf); a key with an escape or a control byte is not one of them.
      if (c === BACKSLASH || c < 0x20) return -1;
      pos++;
    }
    if (pos >= this.end) return -1;
    this.pos = pos + 1;
    const names = shape.names;
    const length = pos - start;
    for (let i = 0; i < names.length; i++) {
      const index = (expected + i) % names.length;
      const name = names[index]!;
      if (name.length !== length) continue;
      let j = 0;
      while (j < length && name[j] === bytes[start + j]) j++;
      if (j === length) return index;
    }
    return -1;
  }

  private value(shape: Shape): boolean {
    if (this.bytes[this.pos] === 0x6e) return this.literal('null');
    if (shape === 'DOUBLE') return this.number();
    if (shape === 'VARCHAR') return this.string();
    if (shape === 'BOOLEAN') return this.bytes[this.pos] === 0x74 ? this.literal('true') : this.literal('false');
    return this.object(shape);
  }

  private literal(word: string): boolean {
    const bytes = this.bytes;
    if (this.pos + word.length > this.end) return false;
    for (let i = 0; i < word.length; i++) if (bytes[this.pos + i] !== word.charCodeAt(i)) return false;
    this.pos += word.length;
    return true;
  }

  /** A number in JSON's grammar, short, not overflowing or underflowing, and not a negative zero (see rawJsonCheck). */
  private number(): boolean {
    const bytes = this.bytes;
    const start = this.pos;
    let pos = start;
    const negative = bytes[pos] === MINUS;
    if (negative) pos++;
    let nonZero = false;
    let c = bytes[pos];
    if (c === ZERO) pos++;
    else if (c !== undefined && c > ZERO && c <= NINE) {
      nonZero = true;
      while (pos < this.end && isDigit(bytes[pos]!)) pos++;
    } else return false;
    if (bytes[pos] === DOT) {
      pos++;
      const digits = pos;
      while (pos < this.end && isDigit((c = bytes[pos]!))) {
        if (c !== ZERO) nonZero = true;
        pos++;
      }
      if (pos === digits) return false;
    }
    c = bytes[pos];
    if (c === 0x65 || c === 0x45) {
      pos++;
      c = bytes[pos];
      if (c === PLUS || c === MINUS) pos++;
      const digits = pos;
      while (pos < this.end && isDigit(bytes[pos]!)) pos++;
      if (pos === digits || pos - digits > 2) return false;
    }
    if (pos - start > MAX_NUMBER_LENGTH || (negative && !nonZero)) return false;
    this.pos = pos;
    return true;
  }

  /** A string of valid UTF-8 with one-letter escapes only (see rawJsonCheck). */
  private string(): boolean {
    const bytes = this.bytes;
    const end = this.end;
    if (bytes[this.pos] !== QUOTE) return false;
    let pos = this.pos + 1;
    while (pos < end) {
      const c = bytes[pos++]!;
      if (c === QUOTE) {
        this.pos = pos;
        return true;
      }
      if (c < 0x20) return false;
      if (c === BACKSLASH) {
        const e = bytes[pos++];
        if (e === undefined || e >= 0x80 || SIMPLE_ESCAPE[e] !== 1) return false;
      } else if (c >= 0x80) {
        pos = utf8Sequence(bytes, pos - 1, end);
        if (pos < 0) return false;
      }
    }
    return false;
  }
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
