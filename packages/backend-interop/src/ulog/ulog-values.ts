/** ULog key/value bodies (info, parameters): `uint8 key_len, "type name", value`. */

const decoder = new TextDecoder();

const SCALARS: Record<string, [size: number, read: (v: DataView, at: number) => string]> = {
  int8_t: [1, (v, a) => String(v.getInt8(a))],
  uint8_t: [1, (v, a) => String(v.getUint8(a))],
  int16_t: [2, (v, a) => String(v.getInt16(a, true))],
  uint16_t: [2, (v, a) => String(v.getUint16(a, true))],
  int32_t: [4, (v, a) => String(v.getInt32(a, true))],
  uint32_t: [4, (v, a) => String(v.getUint32(a, true))],
  int64_t: [8, (v, a) => String(v.getBigInt64(a, true))],
  uint64_t: [8, (v, a) => String(v.getBigUint64(a, true))],
  float: [4, (v, a) => String(v.getFloat32(a, true))],
  double: [8, (v, a) => String(v.getFloat64(a, true))],
  bool: [1, (v, a) => String(v.getUint8(a) !== 0)],
  char: [1, (v, a) => String.fromCharCode(v.getUint8(a))],
};

/**
 * The key and the value as text: `char[N]` as UTF-8 (see {@link ulogText}), scalars in decimal (floats as the
 * shortest text that reads back the same double, as Python's `repr` prints them), other arrays as a JSON list.
 */
export function decodeKeyValue(body: Uint8Array): { type: string; key: string; value: string } {
  const keyLength = body[0] ?? 0;
  if (1 + keyLength > body.length) throw new RangeError('key runs past the message');
  const typeAndKey = decoder.decode(body.subarray(1, 1 + keyLength));
  const space = typeAndKey.indexOf(' ');
  const type = space < 0 ? '' : typeAndKey.slice(0, space);
  const key = space < 0 ? typeAndKey : typeAndKey.slice(space + 1);
  const raw = body.subarray(1 + keyLength);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (type.startsWith('char[')) return { type, key, value: ulogText(raw) };
  const scalar = SCALARS[type];
  if (scalar && raw.length >= scalar[0]) return { type, key, value: scalar[1](view, 0) };
  const array = /^(\w+)\[(\d+)\]$/.exec(type);
  const element = array ? SCALARS[array[1]!] : undefined;
  if (array && element) {
    const n = Math.min(Number(array[2]), Math.floor(raw.length / element[0]));
    const items = Array.from({ length: n }, (_, i) => element[1](view, i * element[0]));
    return { type, key, value: JSON.stringify(items.map((x) => (Number.isNaN(Number(x)) ? x : Number(x)))) };
  }
  return { type, key, value: JSON.stringify([...raw]) };
}

/**
 * A `char[N]` value as pyulog reads it (`str(value, 'utf-8', 'ignore')`, its default): every byte of the value, NULs
 * and what follows them included (a logger that pads with NULs shows them: cutting at the first one would hide the
 * rest), bytes that are not UTF-8 left out rather than replaced. A U+FFFD the value really holds (its three UTF-8
 * bytes) is kept: only replacements the decoder made are removed.
 */
export function ulogText(raw: Uint8Array): string {
  const text = decoder.decode(raw);
  if (!text.includes('\uFFFD') || holdsReplacementCharacter(raw)) return text;
  return text.replaceAll('\uFFFD', '');
}

function holdsReplacementCharacter(raw: Uint8Array): boolean {
  for (let i = raw.indexOf(0xef); i >= 0 && i + 2 < raw.length; i = raw.indexOf(0xef, i + 1)) {
    if (raw[i + 1] === 0xbf && raw[i + 2] === 0xbd) return true;
  }
  return false;
}

const INTEGERS = new Set(['int8_t', 'uint8_t', 'int16_t', 'uint16_t', 'int32_t', 'uint32_t', 'int64_t', 'uint64_t']);

/**
 * A decoded value as JSON data, for the lists of info multiple (kept as JSON): numbers as numbers and booleans as
 * booleans, as pyulog gives them (not their text: `[["-5","6"]]` for two int32 pieces read as strings), arrays as
 * lists; strings, and 64-bit integers beyond 2^53 (a JSON number would round them), as text.
 */
export function jsonValue(kv: { type: string; value: string }): unknown {
  if (kv.type === 'bool') return kv.value === 'true';
  if (kv.type === 'float' || kv.type === 'double') return Number(kv.value);
  if (INTEGERS.has(kv.type)) return Number.isSafeInteger(Number(kv.value)) ? Number(kv.value) : kv.value;
  if (kv.value.startsWith('[') && !kv.type.startsWith('char[')) return JSON.parse(kv.value);
  return kv.value;
}
