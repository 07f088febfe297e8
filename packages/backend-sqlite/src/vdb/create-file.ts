import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { BagError, formatVlinkDate, type RecordingContext, type ResolvedWriterConfig } from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver } from '../driver/driver.js';
import { compressionEnabled } from './compression.js';
import * as SQL from './sql.js';

/**
 * Creates a `.vdb` file as VLink's writer does (format reference §2.1, §2.2): deletes an existing one (and its
 * journal/WAL leftovers), creates missing directories, applies the pragmas, and creates the tables, the header row
 * (`date` default: the recording start) and the index in one transaction. Returns the open connection.
 */
export function createVdbFile(
  driver: SqliteDriver,
  path: string,
  config: ResolvedWriterConfig,
  context: RecordingContext,
  date = formatVlinkDate(context.startTimestamp),
): SqliteConnection {
  let db: SqliteConnection | undefined;
  try {
    for (const suffix of ['', '-journal', '-wal', '-shm']) {
      if (existsSync(path + suffix)) rmSync(path + suffix, { force: true });
    }
    mkdirSync(dirname(path), { recursive: true });
    db = driver.open(path);
    db.exec(SQL.BUSY_TIMEOUT_WRITER);
    for (const pragma of SQL.writerPragmas(config.walMode)) db.exec(pragma);
    db.exec('BEGIN;');
    db.exec(SQL.CREATE_HEADER);
    const v = context.version;
    const header = db.prepare(SQL.INSERT_HEADER);
    header.run(
      v.major,
      v.minor,
      v.patch,
      0,
      0,
      'MicroSecond',
      compressionEnabled(config) ? 'lzav' : 'None',
      context.processName,
      date,
      context.tagName,
      0,
      context.timezone,
      context.startTimestamp,
    );
    header.finalize();
    db.exec(SQL.CREATE_SCHEMAS);
    db.exec(SQL.CREATE_URLS);
    db.exec(SQL.CREATE_DATAS);
    db.exec(SQL.CREATE_INDEX);
    db.exec('COMMIT;');
    return db;
  } catch (error) {
    try {
      db?.close();
    } catch {
      // the open error below is the one worth reporting
    }
    throw BagError.wrap(error, 'IO_ERROR', 'cannot create .vdb file', { file: path });
  }
}
