/**
 * The types a VLinkDatas row may hold. SQLite columns are not typed: a hand-made or damaged `.vdb` can store TEXT,
 * REAL or NULL where VLink writes an INTEGER, and each driver hands such a value back as it is (a string, a number
 * with a fraction or beyond any INTEGER, null). The reader refuses those rows and the check reports them.
 */

/** 2^63: the magnitude of SQLite's INTEGER range, exactly representable as a double. */
export const INT64_LIMIT = 2 ** 63;

/** A stored INTEGER as a number (drivers hand out a number, or a bigint when asked to); undefined for anything else. */
export function integerOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value % 1 === 0 && Math.abs(value) <= INT64_LIMIT ? value : undefined;
  return typeof value === 'bigint' ? Number(value) : undefined;
}

/** A stored value's type for a message, never its content (which a hostile file chooses). */
export function storedType(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return 'TEXT';
  if (value instanceof Uint8Array) return 'a BLOB';
  return integerOf(value) === undefined ? 'a REAL' : 'an INTEGER';
}
