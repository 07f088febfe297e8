import { rmSync, statSync } from 'node:fs';
import {
  BagError,
  countsForFrequency,
  parseAction,
  parseSchemaType,
  SchemaType,
  type ProgressCallback,
  type SalvageResult,
  urlKindOf,
} from '@vlink/bag-core';
import { decompressFrame, isCompressionFrame } from '@vlink/bag-core/internal';
import type { SqlRow, SqliteConnection, SqliteDriver, SqlValue } from '../driver/driver.js';
import { frameOriginalSize } from './compression.js';
import { bytes, text } from './facts.js';
import { frequency } from './recording.js';
import * as SQL from './sql.js';
import { fsyncPath } from './fsync.js';
import { CutPageCheck } from './cut-file.js';
import { copyRows, VDB_FRAMES, VDB_FRAMES_SHAPE, WorkCopies } from './salvage-rows.js';
import { measureLoss } from './salvage-loss.js';
import { placeholderUrl } from './placeholder-url.js';
import { trailingBytes, trailingBytesProblem } from './trailing-bytes.js';
import { emptyUrl, readUrls, type UrlRow } from './salvage-urls.js';

export { placeholderUrl } from './placeholder-url.js';

const MAX_PROBLEMS = 100;

/**
 * `Backend.salvage` for a `.vdb`: copies into a new file at `target` everything SQLite can read of `source` — the
 * header, schemas and urls, and every row of `VLinkDatas` it can reach, walking past damaged pages by rowid — with
 * the VLink DDL, the counts, sizes, durations and frequencies recomputed from the rows kept, `complete = 1`, the index
 * and a clean close. A row whose compressed payload does not decode is dropped. `source` is never written: a hot
 * journal or WAL is rolled back on a private copy. What the header and `VLinkUrls` said beforehand measures the loss.
 */
export function salvageVdb(
  driver: SqliteDriver,
  source: string,
  target: string,
  onProgress?: ProgressCallback,
): SalvageResult {
  const problems: string[] = [];
  const problem = (textLine: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(textLine);
  };
  // What of the file's bookkeeping the copy cannot keep (url names, schemas, …): the repair is not lossless then.
  const lostMetadata = new Set<string>();
  const lose = (what: string) => lostMetadata.add(what);
  const copies = new WorkCopies(driver, source, target, problem);
  let src: SqliteConnection | undefined;
  let cutTwin: SqliteConnection | undefined;
  let out: SqliteConnection | undefined;
  try {
    src = driver.open(copies.work, { readOnly: true });
    src.exec(SQL.BUSY_TIMEOUT_READER);
    // Bytes after the last page are not the database's (another file appended?): the copy cannot hold them.
    const trailing = trailingBytes(src, statSync(source).size);
    if (trailing > 0) {
      problem(`${trailingBytesProblem(trailing)}: left out of the copy`);
      lose(`${trailing} bytes after the database's last page (the input still has them)`);
    }
    if (copies.twin) cutTwin = driver.open(copies.twin, { readOnly: true });
    const cutCheck = cutTwin && CutPageCheck.open(cutTwin, VDB_FRAMES);
    if (cutTwin && !cutCheck) problem('the rows of the page the cut went through cannot be told from made-up ones');
    let cutRows = 0;
    /** Rows with columns the writer cannot have written (a NULL url, …): a reader still returns them, guessing. */
    let mistypedRows = 0;
    const header = tryRead(() => src!.prepare(SQL.SELECT_HEADER).get(), problem, 'VLinkHeader');
    if (!header)
      throw new BagError('CORRUPT_FILE', 'VLinkHeader cannot be read: nothing to rebuild from', { file: source });
    // Read padded with zeros, a header row the cut went through is all zeros and NULLs (format version 0): nothing
    // to rebuild from, said of the user's file rather than of a copy that would not open.
    if (
      cutTwin &&
      !sameRow(
        header,
        tryRead(
          () => cutTwin!.prepare(SQL.SELECT_HEADER).get(),
          () => {},
          '',
        ),
      )
    )
      throw new BagError('CORRUPT_FILE', 'the file is cut short inside VLinkHeader: nothing to rebuild from', {
        file: source,
      });
    const salvaged = readUrls(src, cutTwin, problem, lose);
    const urls = salvaged.byId;
    const schemas = tryRead(() => src!.prepare(SQL.SELECT_SCHEMAS).all(), problem, 'VLinkSchemas');
    if (!schemas) lose('VLinkSchemas (the schemas)');
    const counters = readSideTable(
      src,
      'SELECT url, cause, count FROM VLinkBagCounters;',
      lose,
      'VLinkBagCounters (the counts of frames that never reached the file)',
    );
    // Publish times (§2.14) by old rowid; the copies get new rowids, so the entries are rekeyed as rows are copied.
    const publishTimes = new Map<number, SqlValue>();
    for (const row of readSideTable(
      src,
      'SELECT id, publish FROM VLinkBagPublishTimes;',
      lose,
      'VLinkBagPublishTimes (the publish times of frames)',
    ) ?? [])
      if (isInteger(row['id']) && isInteger(row['publish'])) publishTimes.set(Number(row['id']), row['publish']!);
    const compressed = !['', 'None', 'NONE', 'none'].includes(text(header['compress']));

    for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(target + suffix, { force: true });
    out = driver.open(target);
    out.exec(SQL.BUSY_TIMEOUT_WRITER);
    for (const pragma of SQL.writerPragmas(false)) out.exec(pragma);
    out.exec('BEGIN;');
    out.exec(SQL.CREATE_HEADER);
    const h = (key: string) => header[key] ?? null;
    // A start that is no time (negative, or not an integer: damage) is read as 0 and the file as broken (format
    // reference, VLinkHeader), so the copy failed its own check (fuzz .vdb seed 1209 #574, a header row overwritten):
    // written as the 0 the damaged file was read with, and said.
    const start = header['start_timestamp'];
    const startOk = isInteger(start) && Number(start) >= 0;
    if (!startOk) {
      problem(`start_timestamp ${String(start)} is no start time: written as 0, as readers took it`);
      lose('the recording start (start_timestamp)');
    }
    out
      .prepare(SQL.INSERT_HEADER)
      .run(
        h('major'),
        h('minor'),
        h('patch'),
        0,
        0,
        h('accuracy'),
        h('compress'),
        h('process'),
        h('date'),
        h('tag'),
        0,
        h('timezone'),
        startOk ? start! : 0,
      );
    out.exec(SQL.CREATE_SCHEMAS);
    out.exec(SQL.CREATE_URLS);
    out.exec(SQL.CREATE_DATAS);
    const insertSchema = out.prepare(SQL.INSERT_SCHEMA);
    for (const s of schemas ?? []) {
      const name = text(s['ser']);
      const encoding = text(s['encoding']);
      // A schema row that damage left without a name or a known family describes nothing a reader can use, and the
      // copy would fail check for it: left out, and said.
      if (!name || !encoding || parseSchemaType(encoding) === SchemaType.Unknown) {
        problem(`schema "${name}" (${encoding || 'no encoding'}) has no name or known family: left out`);
        lose(`schema "${name}"`);
        continue;
      }
      insertSchema.run(s['ser'] ?? null, s['encoding'] ?? null, bytes(s['data']));
    }

    const insert = out.prepare(SQL.INSERT_DATA);
    if (publishTimes.size > 0) out.exec(SQL.CREATE_PUBLISH_TIMES);
    const insertPublish = publishTimes.size > 0 ? out.prepare(SQL.INSERT_PUBLISH_TIME) : undefined;
    let rows = 0;
    let lastTs = 0;
    /** Rows dropped that no url can be named for (mistyped columns). */
    let unattributed = 0;
    // Types the file had, to report the ones taken from the first kept message instead (format reference §2.4 rule).
    const typeless = new Set([...urls.values()].filter((u) => !u.type).map((u) => u.id));
    const placeholderFor = (id: number): UrlRow => {
      const u: UrlRow = { ...emptyUrl(id, placeholderUrl(id)), ser: 'raw', encoding: 'raw', placeholder: true };
      urls.set(id, u);
      lose(`the name of url id ${id} (kept as ${u.url})`);
      return u;
    };
    // False: no row the writer wrote (the walk does not take its rowid as its position); true: kept, or dropped. An
    // orphan (a row of a page the b-tree no longer reaches) was read from the file's own bytes: no cut made it up.
    const keep = (row: SqlRow, orphan = false): boolean => {
      // Rows the writer wrote have an integer time and url id and a blob (NULL: empty); anything else is not a row.
      // Nor is a time no writer stores (negative, or past 2^53 - 1 µs: refused as LIMIT_REACHED): copied, it became
      // the copy's duration, which its own check then refused (fuzz .vdbx seed 1212 #14980: 1.7e18 µs).
      const blob = row['data'];
      const mistyped =
        !isInteger(row['elapsed']) || !isInteger(row['url']) || !(blob instanceof Uint8Array || blob === null);
      if (mistyped || !isStorableTime(row['elapsed'])) {
        mistypedRows++;
        const named = isInteger(row['url']) ? urls.get(Number(row['url'])) : undefined;
        if (named) named.dropped++;
        else unattributed++;
        const why = mistyped ? 'NULL or mistyped columns' : `time ${String(row['elapsed'])} µs`;
        problem(`row ${String(row['rowid'])}: not a row the writer wrote (${why}); dropped`);
        return false;
      }
      const id = Number(row['url']);
      if (cutCheck && !orphan && !cutCheck.intact(row)) {
        // Bytes of this row were cut off; the zeros in their place would pass for its payload.
        cutRows++;
        const named = urls.get(id);
        if (named) named.dropped++;
        else unattributed++;
        return true;
      }
      const u = urls.get(id) ?? placeholderFor(id);
      let data = blob instanceof Uint8Array ? blob : new Uint8Array(0);
      let size = data.length;
      if (compressed && isCompressionFrame(data)) {
        try {
          size = decompressFrame(data).length;
        } catch {
          u.dropped++;
          u.droppedBytes += frameOriginalSize(data) ?? data.length;
          problem(`row ${String(row['rowid'])} (${u.url}): its compressed payload does not decode; dropped`);
          return true;
        }
      }
      if (!(data instanceof Uint8Array) || data.constructor !== Uint8Array) data = new Uint8Array(data);
      const elapsed = Number(row['elapsed']);
      const copied = insert.run(row['elapsed'] ?? 0, id, row['action'] ?? null, data);
      const publish = publishTimes.get(Number(row['rowid']));
      if (publish !== undefined) insertPublish!.run(copied.lastInsertRowid, publish);
      rows++;
      u.count++;
      u.size += size;
      if (!u.type) u.type = urlKindOf(parseAction(text(row['action'])));
      if (elapsed > lastTs) lastTs = elapsed;
      if (countsForFrequency(parseAction(text(row['action'])))) {
        if (u.firstTs < 0 || elapsed < u.firstTs) u.firstTs = elapsed;
        if (elapsed > u.lastTs) u.lastTs = elapsed;
      }
      if ((rows & 8191) === 0) {
        out!.exec('COMMIT;');
        out!.exec('BEGIN;');
      }
      return true;
    };
    const orphans = copies.orphanSource(src, [VDB_FRAMES_SHAPE], problem);
    const skipped = copyRows(src, VDB_FRAMES, keep, problem, onProgress, orphans);
    if (cutRows > 0) problem(`${cutRows} rows held bytes the cut took off: dropped`);

    const insertUrl = out.prepare(SQL.INSERT_URL);
    for (const u of urls.values()) {
      if (u.placeholder)
        problem(
          `url id ${u.id} is not in VLinkUrls (its name is lost): its ${u.count} rows are kept under ${u.url} as ser raw`,
        );
      else if (typeless.has(u.id))
        problem(`url ${u.url} had no type: set to ${u.type || 'Unknown'} from its first message`);
      if (!u.type) u.type = 'Unknown';
      if (u.count > 0 && !u.ser) {
        // No ser type: every frame of the url had an empty one (VLink stores none then, and its check refuses such
        // a file) or damage took it. A url with messages needs one (the copy must pass check), and raw is what its
        // payloads can still be read as, as for a url whose row is lost.
        problem(`url ${u.url} had no ser type: its ${u.count} rows are kept as ser raw`);
        u.ser = 'raw';
        u.encoding ||= 'raw';
      }
      insertUrl.run(
        u.id,
        u.url,
        u.type,
        u.ser,
        u.encoding,
        u.count,
        u.loss,
        u.size,
        frequency(u.count, u.firstTs, u.lastTs),
      );
    }
    if (counters && counters.length > 0) {
      out.exec(SQL.CREATE_COUNTERS);
      const c = out.prepare(SQL.INSERT_COUNTER);
      for (const row of counters) c.run(row['url'] ?? '', row['cause'] ?? '', row['count'] ?? 0);
    }
    out.prepare(SQL.UPDATE_HEADER_COUNT).run(rows, lastTs);
    out.exec(SQL.CREATE_INDEX);
    out.prepare(SQL.UPDATE_HEADER_COMPLETE).run();
    out.exec('COMMIT;');
    out.close();
    out = undefined;
    fsyncPath(target);

    if (skipped > 0) problem(`${skipped} rowids past damaged pages could not be read`);
    const saidTotal = Number(header['count']);
    const loss = measureLoss(
      salvaged,
      { rows, unattributed, saidTotal: Number.isSafeInteger(saidTotal) && saidTotal > 0 ? saidTotal : 0 },
      problem,
    );
    const lost = loss.urls.reduce((n, u) => n + u.lostBytes, 0);
    return {
      urls: loss.urls,
      unattributedLostFrames: loss.unattributedLostFrames,
      lostBytes: lost > 0 || skipped === 0 ? lost : skipped,
      lostMetadata: [...lostMetadata],
      problems,
      madeUpFrames: cutRows + mistypedRows,
    };
  } finally {
    try {
      out?.close();
    } catch {
      // a failure above is the one to report
    }
    src?.close();
    cutTwin?.close();
    copies.remove();
  }
}

function isInteger(value: SqlValue | undefined): boolean {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
}

/** An integer time a writer stores: 0 … 2^53 - 1 µs. */
function isStorableTime(value: SqlValue | undefined): boolean {
  const n = Number(value);
  return n >= 0 && n <= Number.MAX_SAFE_INTEGER;
}

function tryRead<T>(read: () => T, problem: (line: string) => void, what: string): T | undefined {
  try {
    return read();
  } catch (error) {
    if (what) problem(`${what} cannot be read: ${(error as Error).message}`);
    return undefined;
  }
}

/** Two reads of one row give the same values (the header read padded with zeros and with 0xff). */
function sameRow(a: SqlRow, b: SqlRow | undefined): boolean {
  return b !== undefined && Object.keys(a).every((k) => Object.is(a[k], b[k]));
}

/** A vlink-bag side table (§2.13, §2.14): undefined when it cannot be read, and lost unless the file never had it. */
function readSideTable(
  db: SqliteConnection,
  sql: string,
  lose: (what: string) => void,
  what: string,
): SqlRow[] | undefined {
  try {
    return db.prepare(sql).all();
  } catch (error) {
    // Only files that had something to store get the table (SQLite says so alike in every driver).
    if (!/no such table/i.test((error as Error).message)) lose(what);
    return undefined;
  }
}
