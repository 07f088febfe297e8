/** Thrown by {@link plainValue} past the depth limit. */
export class TooDeepError extends Error {}

/**
 * A decoded ROS / CDR / ULog value as plain JSON data, so every caller serialises it the same way (JSON.stringify
 * refuses bigints and writes typed arrays as objects): 64-bit integers (bigint) become numbers when they are safe
 * integers and decimal strings otherwise (as the proto3 JSON mapping writes int64), typed arrays become arrays of
 * numbers (uint8[] too; the size limit keeps these bounded). Nested deeper than `maxDepth` levels throws
 * {@link TooDeepError}.
 */
export function plainValue(value: unknown, maxDepth: number, depth = 0): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= maxDepth) throw new TooDeepError();
  if (ArrayBuffer.isView(value)) {
    if (value instanceof BigInt64Array || value instanceof BigUint64Array)
      return Array.from(value, (item) => plainValue(item, maxDepth, depth + 1));
    return Array.from(value as unknown as ArrayLike<number>);
  }
  if (Array.isArray(value)) return value.map((item) => plainValue(item, maxDepth, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = plainValue(item, maxDepth, depth + 1);
  return out;
}
