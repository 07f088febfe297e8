import type { SqlRow, SqliteConnection, SqliteStatement, SqlValue } from '../driver/driver.js';
import { text } from './facts.js';
import { placeholderUrl } from './placeholder-url.js';
import * as SQL from './sql.js';

// The urls a .vdb salvage starts from: what VLinkUrls said of each (its last metadata refresh, the measure of what was
// lost), with the rows a cut made up left out. Apart from salvage.ts, which copies the rows.

export interface UrlRow {
  id: number;
  url: string;
  type: string;
  ser: string;
  encoding: string;
  /** What the file said (its last metadata refresh): the measure of what was lost. */
  saidCount: number;
  saidSize: number;
  loss: number;
  count: number;
  size: number;
  /** Rows dropped because their payload did not decode. */
  dropped: number;
  droppedBytes: number;
  firstTs: number;
  lastTs: number;
  /** No `VLinkUrls` row names this id (damaged table): the rows are kept under a placeholder url. */
  placeholder?: boolean;
}

/** What `readUrls` found: the urls by id, and whether they are all the file had (VLinkUrls read whole and intact). */
export interface SalvageUrls {
  byId: Map<number, UrlRow>;
  complete: boolean;
}

/**
 * Reads VLinkUrls. `twin` (a cut file padded with 0xff, see `CutPageCheck`) tells a row the cut went through from an
 * intact one: read padded with zeros, a cut row comes back as url id 0 with no name and no counts, a url that never
 * was. Such a row is left out (its rows, if any, get a placeholder) and its name is said lost. `lost` collects what of
 * the file's bookkeeping the copy cannot keep (url names, loss ratios): any makes the repair lossy.
 */
export function readUrls(
  db: SqliteConnection,
  twin: SqliteConnection | undefined,
  problem: (line: string) => void,
  lost: (what: string) => void,
): SalvageUrls {
  const out = new Map<number, UrlRow>();
  let rows: SqlRow[];
  try {
    rows = db.prepare(SELECT_URL_ROWS).all();
  } catch (error) {
    problem(`VLinkUrls cannot be read: ${(error as Error).message}`);
    lost('VLinkUrls (the names of the urls)');
    return { byId: out, complete: false };
  }
  const cut = twin && cutRows(twin, rows);
  let complete = true;
  const numbered: number[] = [];
  for (const row of rows) {
    const id = Number(row['id']);
    if (cut?.has(Number(row['rowid']))) {
      complete = false;
      problem(`VLinkUrls row ${String(row['rowid'])} held bytes the cut took off: its url's name and counts are lost`);
      lost(`the name of a url (VLinkUrls row ${String(row['rowid'])}, cut off)`);
      continue;
    }
    const stored = row['url'];
    if (typeof stored === 'number' || typeof stored === 'bigint') {
      // The column is TEXT, which SQLite keeps numbers out of: another table's row read as a url (a page copied over
      // the table's), not a url with a strange name. Its id's rows, if any, get a placeholder as a lost name's do.
      numbered.push(Number(row['rowid']));
      continue;
    }
    if (!Number.isSafeInteger(id) || out.has(id)) continue;
    const loss = Number(row['loss']);
    const said = Number(row['count']);
    const saidSize = Number(row['size']);
    // Damage can blank a name or garble the loss ratio; check refuses either, so the copy gets what a lost row gets.
    let name = text(row['url']);
    if (!name) {
      name = placeholderUrl(id);
      complete = false;
      problem(`url id ${id} has no name in VLinkUrls: its rows are kept under ${name}`);
      lost(`the name of url id ${id} (kept as ${name})`);
    }
    const validLoss = loss === -1 || (loss >= 0 && loss <= 1);
    if (!validLoss) {
      problem(`url ${name}: loss ratio ${String(row['loss'])} is not −1 or in [0, 1]: stored as −1 (unknown)`);
      lost(`the loss ratio of url ${name}`);
    }
    out.set(id, {
      ...emptyUrl(id, name),
      type: text(row['type']),
      ser: text(row['ser']),
      encoding: text(row['encoding']),
      saidCount: Number.isSafeInteger(said) && said > 0 ? said : 0,
      saidSize: Number.isSafeInteger(saidSize) && saidSize > 0 ? saidSize : 0,
      loss: validLoss ? loss : -1,
    });
  }
  if (numbered.length > 0) {
    complete = false;
    const which = numbered.length === 1 ? `row ${numbered[0]}` : `rows ${numbered[0]}…${numbered.at(-1)}`;
    problem(`${numbered.length} VLinkUrls rows (${which}) hold a number where a url belongs: left out`);
  }
  return { byId: out, complete };
}

const SELECT_URL_ROWS = SQL.SELECT_URLS.replace('SELECT id,', 'SELECT rowid, id,');

/** The rowids of `rows` that the twin reads otherwise, or cannot read: rows that hold bytes the cut took. */
function cutRows(twin: SqliteConnection, rows: SqlRow[]): Set<number> {
  const cut = new Set<number>();
  let seek: SqliteStatement;
  try {
    seek = twin.prepare(`${SELECT_URL_ROWS.slice(0, -1)} WHERE rowid = ?;`);
  } catch {
    for (const row of rows) cut.add(Number(row['rowid']));
    return cut;
  }
  for (const row of rows) {
    const rowid = Number(row['rowid']);
    let other: SqlRow | undefined;
    try {
      other = seek.get(row['rowid'] as SqlValue);
    } catch {
      other = undefined;
    }
    if (!other || Object.keys(row).some((k) => !Object.is(row[k], other[k]))) cut.add(rowid);
  }
  return cut;
}

export function emptyUrl(id: number, url: string): UrlRow {
  return {
    id,
    url,
    type: '',
    ser: '',
    encoding: '',
    saidCount: 0,
    saidSize: 0,
    loss: 0,
    count: 0,
    size: 0,
    dropped: 0,
    droppedBytes: 0,
    firstTs: -1,
    lastTs: -1,
  };
}
