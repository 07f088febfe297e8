import { statSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import {
  assertPlainTables,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
  type SqlRow,
  type SqlValue,
  trailingBytes,
  trailingBytesProblem,
} from '@vlink/bag-sqlite';
import type { TimeBase } from '../common/time-base.js';
import type { MessageWindow, Ros2Storage, StorageMessage, StorageTopic } from './storage.js';

/**
 * A rosbag2 sqlite3 storage file (`.db3`, from the first ones of 2018 to schema version 4: `topics`, `messages`, and
 * from Iron on `message_definitions`), read through the project's SQLite driver seam. Messages in `ORDER BY timestamp, id`
 * (rosbag2's own order). Times are selected relative to the recording start (`timestamp - ?`), so they stay exact
 * where the drivers return 64-bit integers as JavaScript numbers.
 */
export class SqliteStorage implements Ros2Storage {
  readonly identifier = 'sqlite3';
  readonly topics: StorageTopic[] = [];
  readonly definitions = new Map<string, { encoding: string; text: string }>();
  readonly counts = new Map<number, number>();
  readonly firstNs: bigint | undefined;
  readonly lastNs: bigint | undefined;
  readonly fileSize: number;
  /** Bytes after the database's last page (another file appended?): SQLite does not read them. */
  readonly problems: string[] = [];
  readonly embeddedMetadata: string | undefined;
  readonly rosDistro: string | undefined = undefined;

  private constructor(
    readonly file: string,
    private readonly db: SqliteConnection,
  ) {
    this.fileSize = statSync(file).size;
    // Before any query of the tables: a file from anywhere must not make a read run its SQL (see assertPlainTables).
    assertPlainTables(db, file, ROSBAG2, ['topics', 'messages', 'message_definitions', 'metadata', 'schema']);
    const trailing = trailingBytes(db, this.fileSize);
    if (trailing > 0) this.problems.push(trailingBytesProblem(trailing));
    const tables = new Set(
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => String(r['name'])),
    );
    if (!tables.has('topics') || !tables.has('messages'))
      throw new BagError('CORRUPT_FILE', 'not a rosbag2 sqlite3 storage (no topics/messages tables)', { file });
    // The first rosbag2 storages (2018) have no serialization_format column: their messages are CDR.
    const columns = columnsOf(db, 'topics');
    const format = columns.has('serialization_format') ? 'serialization_format' : "'cdr'";
    // Foxy on keeps each topic's QoS profiles, Iron on its type hash, in the storage too.
    const qos = columns.has('offered_qos_profiles') ? 'offered_qos_profiles' : 'NULL';
    const hash = columns.has('type_description_hash') ? 'type_description_hash' : 'NULL';
    const sql = `SELECT id, name, type, ${format} AS format, ${qos} AS qos, ${hash} AS hash FROM topics ORDER BY id`;
    for (const row of db.prepare(sql).all()) {
      // `name TEXT NOT NULL`: anything else is another table's row read as a topic (a page copied over the table's,
      // found by hand: every message read under a made-up topic), not a topic.
      if (typeof row['name'] !== 'string' || typeof row['type'] !== 'string')
        throw new BagError(
          'CORRUPT_FILE',
          `topics row ${String(row['id'])} has no topic name and type: the table is damaged`,
          {
            file,
          },
        );
      this.topics.push({
        key: Number(row['id']),
        name: String(row['name']),
        type: String(row['type']),
        encoding: String(row['format'] ?? 'cdr'),
        ...(typeof row['qos'] === 'string' ? { offeredQosProfiles: row['qos'] } : {}),
        ...(typeof row['hash'] === 'string' && row['hash'] !== '' ? { typeDescriptionHash: row['hash'] } : {}),
      });
    }
    if (tables.has('message_definitions')) {
      const rows = db.prepare('SELECT topic_type, encoding, encoded_message_definition FROM message_definitions').all();
      for (const row of rows) {
        this.definitions.set(String(row['topic_type']), {
          encoding: String(row['encoding']),
          text: String(row['encoded_message_definition'] ?? ''),
        });
      }
    }
    if (tables.has('metadata')) {
      const row = db.prepare('SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1').get();
      this.embeddedMetadata = typeof row?.['metadata'] === 'string' ? row['metadata'] : undefined;
    }
    // Humble (rosbag2 0.15.4) on: `schema(schema_version, ros_distro)`, the distro whose definitions fit its types.
    if (tables.has('schema') && columnsOf(db, 'schema').has('ros_distro')) {
      const row = db.prepare('SELECT ros_distro FROM schema ORDER BY schema_version DESC LIMIT 1').get();
      this.rosDistro = typeof row?.['ros_distro'] === 'string' ? row['ros_distro'] : undefined;
    }
    for (const row of db.prepare('SELECT topic_id, COUNT(*) AS n FROM messages GROUP BY topic_id').all())
      this.counts.set(Number(row['topic_id']), Number(row['n']));
    // Whole milliseconds and the rest apart: both fit a double, so the ns value is exact.
    const span = db
      .prepare(
        'SELECT MIN(timestamp) / 1000000 AS a, MIN(timestamp) % 1000000 AS b, MAX(timestamp) / 1000000 AS c, MAX(timestamp) % 1000000 AS d FROM messages',
      )
      .get();
    const exact = (ms: SqlValue | undefined, rest: SqlValue | undefined) =>
      typeof ms === 'number' || typeof ms === 'bigint'
        ? BigInt(ms) * 1_000_000n + BigInt(typeof rest === 'number' || typeof rest === 'bigint' ? rest : 0)
        : undefined;
    this.firstNs = exact(span?.['a'], span?.['b']);
    this.lastNs = exact(span?.['c'], span?.['d']);
  }

  get complete(): boolean {
    return this.problems.length === 0;
  }

  /** `immutable`: SQLite creates nothing beside the file and reads no `-wal` (see openLeavingFolderAsIs). */
  static open(driver: SqliteDriver, file: string, immutable = false): SqliteStorage {
    let db: SqliteConnection;
    try {
      db = driver.open(file, { readOnly: true, ...(immutable ? { immutable } : {}) });
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', 'cannot open the rosbag2 sqlite3 storage', { file });
    }
    try {
      return new SqliteStorage(file, db);
    } catch (error) {
      db.close();
      throw BagError.wrap(error, 'CORRUPT_FILE', 'cannot read the rosbag2 sqlite3 storage', { file });
    }
  }

  *messages(window: MessageWindow, base: TimeBase): IterableIterator<StorageMessage> {
    const where: string[] = [];
    const params: SqlValue[] = [base.startNs];
    if (window.keys) {
      if (window.keys.length === 0) return;
      where.push(`topic_id IN (${window.keys.map(() => '?').join(', ')})`);
      params.push(...window.keys);
    }
    if (window.beginUs !== undefined) {
      where.push('timestamp >= ?');
      params.push(base.nsAtUs(window.beginUs));
    }
    if (window.endUs !== undefined) {
      where.push('timestamp <= ?');
      params.push(base.nsAtEndOfUs(window.endUs));
    }
    const sql = `SELECT topic_id, timestamp - ? AS rel, data FROM messages${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY timestamp, id`;
    const out: StorageMessage = { key: 0, timestamp: 0, publishTime: undefined, sequence: undefined, data: EMPTY };
    let statement: SqliteStatement | undefined;
    let rows: IterableIterator<SqlRow> | undefined;
    try {
      // Inside the try: a damaged schema (a column name one bit off) fails here, and is the file's fault.
      statement = this.db.prepare(sql);
      rows = statement.iterate(...params);
      this.cursors.add(rows);
      // SQLite trusts timestamp_idx for `ORDER BY timestamp`: a time that goes back is a damaged index, and a whole
      // read that gives fewer rows than the table held at open (counted by a scan of the table) is too (found by hand:
      // an index page copied over another gave 263 messages twice, over its root 263 of 3,048). More is not: a
      // recorder may still be adding rows.
      const whole = window.keys === undefined && window.beginUs === undefined && window.endUs === undefined;
      let last = Number.NEGATIVE_INFINITY;
      let stepped = 0;
      for (const row of rows) {
        const rel = Number(row['rel']);
        if (rel < last)
          throw new BagError(
            'CORRUPT_FILE',
            `message ${stepped + 1} in timestamp order goes back in time: the timestamp index is damaged`,
            {
              file: this.file,
            },
          );
        last = rel;
        stepped++;
        out.key = row['topic_id'] as number;
        out.timestamp = base.usFromRelativeNs(rel);
        const data = row['data'];
        out.data = data instanceof Uint8Array ? data : EMPTY;
        yield out;
      }
      const held = [...this.counts.values()].reduce((a, b) => a + b, 0);
      if (whole && stepped < held)
        throw new BagError(
          'CORRUPT_FILE',
          `reading in timestamp order gave ${stepped} messages, the table holds ${held}: the timestamp index is damaged`,
          {
            file: this.file,
          },
        );
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', 'reading the rosbag2 sqlite3 storage failed', { file: this.file });
    } finally {
      if (rows) this.cursors.delete(rows);
      statement?.finalize();
    }
  }

  /** Row iterators not yet finished: closing ends them first (a driver cannot close a connection busy with one). */
  private readonly cursors = new Set<IterableIterator<SqlRow>>();

  close(): void {
    for (const rows of this.cursors) rows.return?.();
    this.cursors.clear();
    this.db.close();
  }
}

const EMPTY = new Uint8Array(0);
const ROSBAG2 = { name: 'a rosbag2 sqlite3 storage', plural: 'rosbag2 storages' };

function columnsOf(db: SqliteConnection, table: string): Set<string> {
  return new Set(
    db
      .prepare(`PRAGMA table_info(${table})`)
      .all()
      .map((r) => String(r['name'])),
  );
}
