/** Thrown by {@link plainValue} past the depth limit. */
export class TooDeepError extends Error {}

/**
 * A decoded ROS / CDR / ULog value as plain JSON data, so every caller serialises it the same way (JSON.stringify
 * refuses bigints and writes typed arrays as objects): 64-bit integers (bigint) become numbers when they are safe
 * integers and decimal strings otherwise (as the proto3 JSON mapping writes int64), typed arrays become arrays of
 * numbers (uint8[] too; the size limit keeps these bounded). Nested deeper than `maxDepth` levels throws
 * {@link TooDeepError}. Converts in place: the value is the decoder's fresh output, owned by the caller, and copying
 * every object cost several times the decoding itself.
 */
export function plainValue(value: unknown, maxDepth: number, depth = 0): unknown {
  if (typeof value === 'bigint') return plainBigint(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= maxDepth) throw new TooDeepError();
  if (ArrayBuffer.isView(value)) {
    if (value instanceof BigInt64Array || value instanceof BigUint64Array) return Array.from(value, plainBigint);
    return Array.from(value as unknown as ArrayLike<number>);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (needsWork(item)) value[i] = plainValue(item, maxDepth, depth + 1);
    }
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (needsWork(item)) record[key] = plainValue(item, maxDepth, depth + 1);
  }
  return record;
}

function needsWork(value: unknown): boolean {
  return (typeof value === 'object' && value !== null) || typeof value === 'bigint';
}

function plainBigint(value: bigint): number | string {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value.toString();
}
