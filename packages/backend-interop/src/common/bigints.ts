/** The smallest of some optional bigints (undefined when there is none). */
export function minBig(values: Iterable<bigint | undefined>): bigint | undefined {
  let out: bigint | undefined;
  for (const v of values) if (v !== undefined && (out === undefined || v < out)) out = v;
  return out;
}

/** The largest of some optional bigints (undefined when there is none). */
export function maxBig(values: Iterable<bigint | undefined>): bigint | undefined {
  let out: bigint | undefined;
  for (const v of values) if (v !== undefined && (out === undefined || v > out)) out = v;
  return out;
}
