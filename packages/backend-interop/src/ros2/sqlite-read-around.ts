import { basename, join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { privateTempDir } from '@vlink/bag-core/internal';
import { salvageSqliteTables, type SqlRow, type SqliteDriver, type TableSalvage } from '@vlink/bag-sqlite';
import { TimeBase } from '../common/time-base.js';
import { CopiedStorage } from './copied-storage.js';
import { SqliteStorage } from './sqlite-storage.js';
import type { Ros2Storage } from './storage.js';

/** How many of the salvage's own lines the problems repeat. */
const SALVAGE_LINES = 5;

/**
 * Opens a rosbag2 sqlite3 storage file. With `tryToFix` it is read through once at open, and when SQLite cannot read
 * it to its end (a damaged page: "database disk image is malformed"; the timestamp index; a file cut short, which
 * does not open at all) it is read from a copy of every row SQLite can reach (`salvageSqliteTables`, the row walk of a
 * `.vdb` salvage, past damaged pages by rowid) in a private temporary folder, removed at close. Its problems say why,
 * how many messages were read and how many rowids lay in damage (rosbag2's message ids follow each other, so about
 * as many messages were lost). Before, such a storage was refused, with `tryToFix` too.
 */
export function openSqliteStorage(
  driver: SqliteDriver,
  file: string,
  immutable: boolean,
  tryToFix: boolean,
): Ros2Storage {
  if (!tryToFix) return SqliteStorage.open(driver, file, immutable);
  let why: string;
  try {
    const storage = SqliteStorage.open(driver, file, immutable);
    const stopped = readThrough(storage);
    if (stopped === undefined) return storage;
    why = `the read stops at damage (${stopped})`;
  } catch (error) {
    if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
    why = `it does not open (${error.detail})`;
  }
  return openSalvaged(driver, file, why);
}

/** Reads every message once; why the read stopped (the storage is closed then), or undefined when it did not. */
function readThrough(storage: SqliteStorage): string | undefined {
  try {
    const window = { keys: undefined, beginUs: undefined, endUs: undefined };
    for (const _ of storage.messages(window, TimeBase.fromFirstNs(storage.firstNs))) {
      // every message is read, which is the check
    }
    return undefined;
  } catch (error) {
    storage.close();
    if (BagError.isInstance(error) && error.code === 'CORRUPT_FILE') return error.detail;
    throw error;
  }
}

function openSalvaged(driver: SqliteDriver, file: string, why: string): Ros2Storage {
  const dir = privateTempDir('vlink-ros2-salvage-');
  try {
    const copy = join(dir.path, basename(file));
    const result = salvageSqliteTables(driver, file, copy, {
      accept: rosbag2Row,
      finish(db, tables) {
        // rosbag2's own index, which the reads in timestamp order go by.
        if (tables.some((t) => t.name === 'messages'))
          db.exec('CREATE INDEX IF NOT EXISTS timestamp_idx ON messages (timestamp ASC);');
      },
    });
    const storage = SqliteStorage.open(driver, copy);
    // What the copy cannot give either (a messages table without the columns rosbag2 reads) is said of the bag's file
    // now, not of the copy in the middle of a read.
    const stopped = readThrough(storage);
    if (stopped !== undefined)
      throw new BagError('CORRUPT_FILE', `${why}, and what SQLite can read of it does not read either (${stopped})`, {
        file,
      });
    storage.problems.push(`${why}: read from a copy of what SQLite can read of it`, ...lossLines(result));
    return new CopiedStorage(storage, file, dir);
  } catch (error) {
    dir.remove();
    if (BagError.isInstance(error) && error.file === file) throw error;
    // Said of the bag's file, never of the copy (a salvage whose copy lacks the tables rosbag2 reads).
    const detail = BagError.isInstance(error) ? error.detail : (error as Error).message;
    throw new BagError(
      BagError.isInstance(error) ? error.code : 'CORRUPT_FILE',
      `${why}, and its salvage failed (${detail})`,
      {
        file,
        cause: error,
      },
    );
  }
}

/** A row rosbag2 can have written: a message has an integer topic id and time and a blob; a topic a name and type. */
function rosbag2Row(table: string, row: SqlRow): boolean {
  if (table === 'messages') {
    const time = row['timestamp'];
    return (
      typeof row['topic_id'] === 'number' &&
      (typeof time === 'number' || (typeof time === 'string' && /^-?\d+$/.test(time))) &&
      row['data'] instanceof Uint8Array
    );
  }
  if (table === 'topics') return typeof row['name'] === 'string' && typeof row['type'] === 'string';
  return true;
}

/** What the salvage read and stepped over, messages first. */
function lossLines(result: TableSalvage): string[] {
  const lines: string[] = [];
  const tables = [...result.tables].sort((a, b) => Number(b.name === 'messages') - Number(a.name === 'messages'));
  for (const t of tables) {
    if (t.name !== 'messages' && t.skipped === 0 && t.refused === 0) continue;
    const what = t.name === 'messages' ? 'messages' : `rows of ${t.name}`;
    const lost = [
      ...(t.skipped > 0 ? [`${t.skipped} rowids in damaged pages stepped over`] : []),
      ...(t.refused > 0 ? [`${t.refused} damaged rows left out`] : []),
    ];
    lines.push(`${t.rows} ${what} read${lost.length > 0 ? `; ${lost.join(', ')}` : ''}`);
  }
  for (const table of result.unreadable) lines.push(`not read: ${table}`);
  lines.push(...result.problems.slice(0, SALVAGE_LINES));
  if (result.problems.length > SALVAGE_LINES) lines.push(`… ${result.problems.length - SALVAGE_LINES} more`);
  return lines;
}
