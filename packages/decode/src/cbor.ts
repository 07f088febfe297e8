import { decode } from 'cborg';
import { joinIndefiniteStrings } from './cbor-indefinite.js';
import { TooDeepError } from './plain-value.js';

/** Any tag: its number and its content, as `{ tag, value }` (no tag's meaning is assumed, none is refused). */
const ANY_TAG = new Proxy<Record<number, (inner: () => unknown) => unknown>>(
  {},
  {
    get: (_target, key) =>
      typeof key === 'string' && /^\d+$/.test(key)
        ? (inner: () => unknown) => ({ tag: Number(key), value: inner() })
        : undefined,
  },
);

const OPTIONS = {
  useMaps: true, // maps keep keys of every type; turned into objects below
  coerceUndefinedToNull: true,
  tags: ANY_TAG,
};

/**
 * A schemaless CBOR payload (MCAP's well-known `cbor` message encoding, what Foxglove decodes with cbor-x) through
 * `cborg` (pure JavaScript, browser-safe, strict about lengths and trailing bytes): maps become objects with their
 * keys as text (a number key `1` as `"1"`, a composite key as its JSON), byte strings arrays of byte values (as every
 * decoder here shows `uint8[]`), tags `{ tag, value }`, `undefined` null; 64-bit integers stay bigints for the caller's
 * `plainValue`. Nested deeper than `maxDepth` throws `TooDeepError`; bytes that are not one CBOR item throw.
 * Indefinite-length byte and text strings, which cborg refuses, are joined first (only after a refusal, so the common
 * payload is read once).
 */
export function decodeCbor(data: Uint8Array, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = decode(data, OPTIONS);
  } catch (error) {
    const joined = joinIndefiniteStrings(data);
    if (joined === undefined) throw error;
    value = decode(joined, OPTIONS);
  }
  return plain(value, maxDepth, 0);
}

function plain(value: unknown, maxDepth: number, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= maxDepth) throw new TooDeepError();
  if (value instanceof Uint8Array) return Array.from(value);
  if (Array.isArray(value)) return value.map((item) => plain(item, maxDepth, depth + 1));
  if (value instanceof Map) {
    const entries: Array<[string, unknown]> = [];
    for (const [key, item] of value) entries.push([keyText(key, maxDepth, depth), plain(item, maxDepth, depth + 1)]);
    // fromEntries defines each key as data, so a key named `__proto__` stays a key.
    return Object.fromEntries(entries);
  }
  const tagged = value as { tag: number; value: unknown };
  return { tag: tagged.tag, value: plain(tagged.value, maxDepth, depth + 1) };
}

function keyText(key: unknown, maxDepth: number, depth: number): string {
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'bigint' || typeof key === 'boolean' || key === null)
    return String(key);
  return JSON.stringify(plain(key, maxDepth, depth + 1), (_k, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
}
