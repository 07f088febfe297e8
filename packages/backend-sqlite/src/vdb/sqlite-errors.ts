import { BagError, type BagErrorCode } from '@vlink/bag-core';

/** SQLite result codes that mean "this file is damaged or is not a database" (SQLITE_CORRUPT, SQLITE_NOTADB). */
const CORRUPT_CODES = new Set([11, 26]);
const CORRUPT_TEXT = /malformed|not a database|SQLITE_CORRUPT|SQLITE_NOTADB|no such table|no such column/i;

/** Maps a driver error to our codes: damaged files become `CORRUPT_FILE`, everything else `fallback`. */
export function sqliteError(
  error: unknown,
  fallback: BagErrorCode,
  message: string,
  file: string,
  url?: string,
): BagError {
  if (BagError.isInstance(error)) return error;
  const e = error as { errcode?: number; errno?: number; code?: string; message?: string } | undefined;
  const numeric = e?.errcode ?? e?.errno;
  const corrupt =
    (typeof numeric === 'number' && CORRUPT_CODES.has(numeric & 0xff)) ||
    CORRUPT_TEXT.test(`${e?.code ?? ''} ${e?.message ?? ''}`);
  return BagError.wrap(
    error,
    corrupt ? 'CORRUPT_FILE' : fallback,
    message,
    url === undefined ? { file } : { file, url },
  );
}
