import { statSync } from 'node:fs';
import {
  BagError,
  FORMAT_VERSION,
  parseSchemaType,
  resolveSchemaType,
  type Info,
  type SchemaType,
  type UrlKind,
  type UrlMeta,
} from '@vlink/bag-core';
import { sanitizeCounterTable } from '@vlink/bag-core/internal';
import type { SqliteConnection, SqlValue } from '../driver/driver.js';
import { placeholderUrl } from './placeholder-url.js';
import { trustedIndexes } from './schema-guard.js';
import { trailingBytes, trailingBytesProblem } from './trailing-bytes.js';
import * as SQL from './sql.js';

/** What the reader keeps per url id to fill frames (format reference §7.2: ser and family come from the url maps). */
export interface UrlEntry {
  url: string;
  ser: string;
  schemaType: SchemaType;
}

const NONE_LIKE = new Set(['', 'None', 'NONE', 'none']);
const URL_KINDS = new Set<string>(['Method', 'Event', 'Field', 'Unknown']);

/** The facts of a `.vdb` the reader derives at open (format reference §2.10). */
export interface VdbFacts {
  info: Info;
  /** Header `compress` is not None-like: rows are checked for the compression frame (§3.2). */
  compressed: boolean;
  /** `idx_elapsed` or `idx_elapsed_url` exists. */
  hasElapsedIndex: boolean;
  /** `idx_elapsed_url` exists. */
  hasUrlIndex: boolean;
  /** A negative `start_timestamp` was found; `check()` fails at once (§2.12). */
  broken: boolean;
  byId: Map<number, UrlEntry>;
  /** `byId` as an array when the ids are small non-negative integers (always, for files we write): faster per row. */
  byIndex: (UrlEntry | undefined)[] | undefined;
  idsByUrl: Map<string, number[]>;
  /** The `VLinkBagPublishTimes` table exists (vlink-bag, §2.14): the cursor joins it. */
  hasPublishTimes: boolean;
  /** Bytes past the database's last page (see trailing-bytes.ts): damage when not 0. */
  trailingBytes: number;
}

/** Header validation, url maps, index detection, blank and total duration (format reference §2.10). */
export function readFacts(db: SqliteConnection, path: string, tolerant = false): VdbFacts {
  // `tryToFix`: the header row is required, everything else falls back to "absent" when SQLite cannot read it.
  const soft = <T>(fallback: T, read: () => T): T => {
    if (!tolerant) return read();
    try {
      return read();
    } catch {
      return fallback;
    }
  };
  const header = db.prepare(SQL.SELECT_HEADER).get();
  if (header === undefined) throw new BagError('CORRUPT_FILE', 'VLinkHeader has no row', { file: path });
  const major = int(header['major']);
  if (major !== FORMAT_VERSION.major) {
    throw new BagError('VERSION_MISMATCH', `format major version ${major} is not ${FORMAT_VERSION.major}`, {
      file: path,
    });
  }
  const accuracy = text(header['accuracy']);
  if (accuracy !== 'MicroSecond') {
    throw new BagError('CORRUPT_FILE', `time accuracy "${accuracy}" is not MicroSecond`, { file: path });
  }
  const compress = text(header['compress']);
  let startTimestamp = int(header['start_timestamp']);
  let complete = int(header['complete']) === 1;
  const broken = startTimestamp < 0;
  if (broken) {
    startTimestamp = 0;
    complete = false;
  }

  const hasSchema = soft(
    false,
    () =>
      db.prepare(SQL.HAS_SCHEMA_TABLE).get() !== undefined && int(db.prepare(SQL.HAS_SCHEMA_ROWS).get()?.['e']) === 1,
  );

  const byId = new Map<number, UrlEntry>();
  const idsByUrl = new Map<string, number[]>();
  const metas: UrlMeta[] = [];
  let totalRawSize = 0;
  for (const row of soft([], () => db.prepare(SQL.SELECT_URLS).all())) {
    const index = int(row['id']);
    // The column is TEXT: SQLite stores whatever a writer binds there as text, so a number (or nothing) is damage, e.g.
    // a page of VLinkDatas copied over the table's (found by hand: the rows' url ids read as names, every frame's url
    // unknown, and a strict read gave none of 3,000 frames without an error). `tryToFix` reads on as before.
    // The same for an id that is not an integer (an INTEGER column keeps text that does not read as a number as it is).
    const stored = row['url'];
    const nameless = stored === null || typeof stored === 'number' || typeof stored === 'bigint';
    if (!tolerant) {
      const bad = nameless
        ? `a VLinkUrls row (id ${text(row['id'])}) holds ${stored === null ? 'no url' : `the number ${String(stored)}`}, not a url`
        : typeof row['id'] === 'bigint' || Number.isSafeInteger(row['id'])
          ? undefined
          : `the VLinkUrls row of ${JSON.stringify(text(stored))} has the id ${JSON.stringify(text(row['id']))}, not an integer`;
      if (bad)
        throw new BagError('CORRUPT_FILE', `${bad}: the table is damaged (open with tryToFix, or run fix)`, {
          file: path,
        });
    }
    // With tryToFix such a row's frames keep their payloads under the name `fix()` gives them: a number is no name
    // (read as one, 1,000 frames of a `.vdb` whose VLinkUrls page a VLinkDatas page had overwritten came out as url "0").
    const url = nameless ? placeholderUrl(index) : text(stored);
    const ser = text(row['ser']);
    const schemaType = resolveSchemaType(parseSchemaType(text(row['encoding'])), ser);
    const type = text(row['type']);
    const size = int(row['size']);
    totalRawSize += size;
    metas.push({
      index,
      url,
      type: (URL_KINDS.has(type) ? type : 'Unknown') as UrlKind,
      ser,
      schemaType,
      count: int(row['count']),
      size,
      loss: num(row['loss']),
      freq: num(row['freq']),
    });
    byId.set(index, { url, ser, schemaType });
    const ids = idsByUrl.get(url);
    if (ids) ids.push(index);
    else idsByUrl.set(url, [index]);
  }
  // A closed file with rows and no url names none of its frames: a strict read would give nothing, without an error
  // (found by hand: VLinkSchemas' root page copied over VLinkUrls'). `check` says the same ("N messages but no url").
  const counted = int(header['count']);
  if (!tolerant && complete && counted > 0 && metas.length === 0)
    throw new BagError(
      'CORRUPT_FILE',
      `the header counts ${counted} messages, but VLinkUrls names no url: the table is damaged (open with tryToFix, or run fix)`,
      { file: path },
    );
  // VLink sorts by transport priority first; that is a VLink middleware notion with no meaning here.
  metas.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.index - b.index));

  const named = soft([], () => db.prepare(SQL.SELECT_INDEXES).all()).map((r) => text(r['name']));
  const indexes = soft(new Set<string>(), () => trustedIndexes(db, named));
  const hasUrlIndex = indexes.has('idx_elapsed_url');
  const hasElapsedIndex = hasUrlIndex || indexes.has('idx_elapsed');

  const first = soft(undefined, () =>
    db.prepare(hasElapsedIndex ? SQL.FIRST_ELAPSED_INDEXED : SQL.FIRST_ELAPSED_NATURAL).get(),
  );
  let blankDuration = first === undefined ? 0 : Math.trunc(int(first['elapsed']) / 1000);
  if (blankDuration < 0) blankDuration = 0;
  let totalDuration = Math.trunc(int(header['duration']) / 1000);
  if (hasElapsedIndex && complete) {
    const last = soft(undefined, () => db.prepare(SQL.LAST_ELAPSED_INDEXED).get());
    if (last !== undefined) {
      const ms = Math.trunc(int(last['elapsed']) / 1000);
      if (ms > blankDuration) totalDuration = ms;
    }
  }

  // An unfinished file (its writer never closed it) has the counters of its last metadata refresh; with `tryToFix`
  // count what is there instead, as fix() will (sizes stay as refreshed: the rows hold compressed bytes).
  let messageCount = int(header['count']);
  if (tolerant && !complete) {
    const live = soft(undefined, () => liveCounts(db));
    if (live) {
      messageCount = 0;
      for (const meta of metas) {
        const c = live.get(meta.index);
        meta.count = c?.n ?? 0;
        meta.freq = c && c.mx > c.mn ? c.n / ((c.mx - c.mn) / 1e6) : 0;
        messageCount += meta.count;
        if (c && Math.trunc(c.mx / 1000) > totalDuration) totalDuration = Math.trunc(c.mx / 1000);
      }
    }
  }

  // A closed file is all its pages: bytes after them are not read by SQLite, and a strict read would give only what
  // comes before (an unfinished file may end in pages of a transaction its writer never committed).
  const size = fileSize(path);
  const trailing = trailingBytes(db, size);
  if (!tolerant && complete && trailing > 0)
    throw new BagError('CORRUPT_FILE', `${trailingBytesProblem(trailing)} (open with tryToFix to read the database)`, {
      file: path,
    });

  const counters = soft(undefined, () => readCounters(db));
  const tag = header['tag'];
  const info: Info = {
    path,
    format: 'vdb',
    version: `${major}.${int(header['minor'])}.${int(header['patch'])}`,
    storageType: 'SQLite3',
    messageCount,
    totalDuration,
    blankDuration,
    timeAccuracy: accuracy,
    compressionType: compress,
    processName: text(header['process']),
    dateTime: text(header['date']),
    tagName: tag === null || tag === undefined ? 'Empty' : text(tag),
    hasCompleted: complete,
    timezone: int(header['timezone']),
    startTimestamp,
    splitCount: 1,
    splitBySize: 0,
    splitByTime: 0,
    hasSchema,
    totalRawSize,
    fileSize: size,
    urls: metas,
    ...(counters ? { counters } : {}),
  };
  let byIndex: (UrlEntry | undefined)[] | undefined = [];
  for (const [id, entry] of byId) {
    if (!Number.isInteger(id) || id < 0 || id > 1_000_000) {
      byIndex = undefined;
      break;
    }
    byIndex[id] = entry;
  }
  const hasPublishTimes = soft(false, () => db.prepare(SQL.HAS_PUBLISH_TABLE).get() !== undefined);
  return {
    info,
    compressed: !NONE_LIKE.has(compress),
    hasElapsedIndex,
    hasUrlIndex,
    broken,
    byId,
    byIndex,
    idsByUrl,
    hasPublishTimes,
    trailingBytes: trailing,
  };
}

/** The `VLinkBagCounters` table (vlink-bag, format reference §2.13), when the file has one with counts in it. */
function readCounters(db: SqliteConnection): Record<string, Record<string, number>> | undefined {
  if (db.prepare(SQL.HAS_COUNTERS_TABLE).get() === undefined) return undefined;
  const table: Record<string, Record<string, number>> = {};
  for (const row of db.prepare(SQL.SELECT_COUNTERS).all()) {
    const url = text(row['url']);
    (table[url] ??= {})[text(row['cause'])] = int(row['count']);
  }
  const clean = sanitizeCounterTable(table);
  return Object.keys(clean).length > 0 ? clean : undefined;
}

/** Rows, first and last elapsed per url id, counted from `VLinkDatas` (what fix() writes back). */
function liveCounts(db: SqliteConnection): Map<number, { n: number; mn: number; mx: number }> {
  const out = new Map<number, { n: number; mn: number; mx: number }>();
  for (const row of db.prepare(SQL.COUNT_BY_URL).all())
    out.set(int(row['uid']), { n: int(row['n']), mn: int(row['mn']), mx: int(row['mx']) });
  return out;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function int(value: SqlValue | undefined): number {
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Math.trunc(Number(value)) || 0;
  return 0;
}

function num(value: SqlValue | undefined): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Number(value) || 0;
  return 0;
}

export function text(value: SqlValue | undefined): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return String(value);
}

export function bytes(value: SqlValue | undefined): Uint8Array {
  if (value instanceof Uint8Array) return value.constructor === Uint8Array ? value : plain(value);
  if (typeof value === 'string') return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

/**
 * better-sqlite3 hands out `Buffer`s, whose `slice()` is a view rather than a copy and which compare unequal to a
 * `Uint8Array` of the same bytes in `deepStrictEqual`. Re-parenting the driver's fresh, unshared Buffer onto
 * `Uint8Array.prototype` makes it a plain `Uint8Array` at a third of the cost of allocating a view over it (a
 * per-row cost that is 5–10 % of a raw 64-byte read).
 */
export function plain(data: Uint8Array): Uint8Array {
  return Object.setPrototypeOf(data, Uint8Array.prototype) as Uint8Array;
}
