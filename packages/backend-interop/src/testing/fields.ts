import assert from 'node:assert/strict';

/** Field names the reference and TypeScript decoders spell differently (ROS times: rosbags, genpy, Foxglove). */
const ALIASES: Record<string, string[]> = {
  sec: ['sec', 'secs'],
  secs: ['secs', 'sec'],
  nanosec: ['nanosec', 'nsec', 'nsecs'],
  nsec: ['nsec', 'nanosec', 'nsecs'],
  nsecs: ['nsecs', 'nsec', 'nanosec'],
};

function field(actual: Record<string, unknown>, key: string): unknown {
  for (const name of ALIASES[key] ?? [key]) if (name in actual) return actual[name];
  return undefined;
}

/** JSON has no NaN or infinity: the expected files spell them as Python prints them (real PX4 logs hold them). */
const NON_FINITE: Record<string, number> = {
  nan: Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
};

/**
 * Every field the reference decoded must be in our decoding with the same value: numbers exactly (bigints and
 * booleans as numbers; integers past 2^53 as decimal text; NaN and infinities as `nan`, `inf`, `-inf`), strings,
 * arrays (typed arrays too) item by item, objects key by key.
 */
export function assertFields(actual: unknown, expected: unknown, path = '$'): void {
  if (expected === null) {
    assert.ok(actual === null || actual === undefined, `${path}: expected null, got ${String(actual)}`);
  } else if (Array.isArray(expected)) {
    const items =
      typeof actual === 'string'
        ? [...actual]
        : ArrayBuffer.isView(actual)
          ? [...(actual as unknown as number[])]
          : actual;
    assert.ok(Array.isArray(items), `${path}: expected an array, got ${typeof actual}`);
    assert.equal(items.length, expected.length, `${path}: length`);
    for (const [i, item] of expected.entries()) assertFields(items[i], item, `${path}[${i}]`);
  } else if (typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object, got ${String(actual)}`);
    for (const [key, value] of Object.entries(expected as Record<string, unknown>))
      assertFields(field(actual as Record<string, unknown>, key), value, `${path}.${key}`);
  } else if (typeof expected === 'number') {
    const n = typeof actual === 'bigint' || typeof actual === 'boolean' ? Number(actual) : actual;
    assert.ok(n === expected, `${path}: expected ${expected}, got ${String(actual)}`);
  } else if (typeof expected === 'boolean') {
    assert.ok(
      actual === expected || actual === Number(expected),
      `${path}: expected ${expected}, got ${String(actual)}`,
    );
  } else if (typeof actual === 'bigint') {
    assert.equal(String(actual), expected, path); // an integer past 2^53, written as decimal text
  } else if (typeof actual === 'number' && typeof expected === 'string' && expected in NON_FINITE) {
    assert.ok(Object.is(actual, NON_FINITE[expected]), `${path}: expected ${expected}, got ${actual}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

/**
 * pyulog flattens a sample to `name`, `array[i]`, `nested[i].field` keys (char arrays as one int8 per character);
 * `@foxglove/ulog` nests them and skips `_padding` fields. Checks every flattened value against the nested one.
 */
export function assertUlogFields(actual: Record<string, unknown>, expected: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(expected)) {
    const parts = key.split(/\.|(?=\[)/);
    if (parts.some((p) => p.startsWith('_'))) continue; // padding: @foxglove/ulog does not return it
    let node: unknown = actual;
    for (const part of parts) {
      const index = /^\[(\d+)\]$/.exec(part);
      if (index && typeof node === 'string') node = node.charCodeAt(Number(index[1])) || 0;
      else if (index) node = (node as unknown[])[Number(index[1])];
      else node = (node as Record<string, unknown>)[part];
    }
    assertFields(node, value, key);
  }
}
