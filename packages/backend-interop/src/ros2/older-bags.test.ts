import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test, withOwnTempDir } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { loadMcapCodecs } from '../common/lz4.js';
import { foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-older-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A bag folder as rosbag2 wrote it in 2018: `topics` without `serialization_format`, metadata.yaml version 1 with
 * `topic_and_type` entries and storage paths that start with the folder's name (relative to its parent).
 */
async function firstRosbag2Bag(name: string): Promise<string> {
  const folder = join(dir, name);
  mkdirSync(folder);
  const db = (await loadDriver()).open(join(folder, `${name}.db3`));
  db.exec(`CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL);
    CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
    INSERT INTO topics VALUES (1, '/chatter', 'std_msgs/String'), (2, '/unused', 'std_msgs/Empty');`);
  const insert = db.prepare('INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)');
  for (let i = 0; i < 3; i++)
    insert.run(1, 1_537_282_604_241_440_135n + BigInt(i) * 1_000_000n, new Uint8Array([0, 1, 0, 0, i]));
  insert.finalize();
  db.close();
  writeFileSync(
    join(folder, 'metadata.yaml'),
    `rosbag2_bagfile_information:
  version: 1
  storage_identifier: sqlite3
  relative_file_paths:
    - ${name}/${name}.db3
  duration:
    nanoseconds: 2000000
  starting_time:
    nanoseconds_since_epoch: 1537282604241440135
  message_count: 3
  topics_with_message_count:
    - topic_and_type:
        name: /chatter
        type: std_msgs/String
        serialization_format: cdr
      message_count: 3
`,
  );
  return folder;
}

describe('rosbag2 bags of the first releases', () => {
  test('version 1: topics without serialization_format (CDR), topic_and_type, paths under the parent', async () => {
    const folder = await firstRosbag2Bag('first');
    const { reader, frames } = await readAll(folder);
    try {
      const info = reader.getInfo();
      assert.deepEqual(
        info.urls.map((u) => [u.url, u.ser, u.encoding, u.count]),
        [
          ['/chatter', 'std_msgs/String', 'cdr', 3],
          ['/unused', 'std_msgs/Empty', 'cdr', 0],
        ],
      );
      assert.deepEqual(
        frames.map((f) => f.timestamp),
        [440, 1440, 2440],
      );
      const topic = info.metadata?.find((m) => m.name === 'rosbag2.topic' && m.values['name'] === '/chatter');
      assert.equal(topic?.values['type'], 'std_msgs/String');
    } finally {
      reader.close();
    }
  });

  test('a renamed folder, and a later metadata.yaml with such paths, still find the storage by its name', async () => {
    const renamed = join(dir, 'renamed');
    renameSync(await firstRosbag2Bag('before-rename'), renamed);
    const reader = await BagReader.create(renamed);
    assert.equal(reader.getInfo().messageCount, 3);
    reader.close();
    const yaml = join(renamed, 'metadata.yaml');
    writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('version: 1', 'version: 4'));
    const v4 = await BagReader.create(renamed);
    assert.equal(v4.getInfo().messageCount, 3);
    v4.close();
  });

  test('a topic has the type metadata.yaml states, as rosbag2 and rosbags read it', async () => {
    const copy = join(dir, 'retyped');
    cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
    const yaml = join(copy, 'metadata.yaml');
    const text = readFileSync(yaml, 'utf8');
    assert.match(text, /type: std_msgs\/msg\/String/);
    writeFileSync(yaml, text.replace('type: std_msgs/msg/String', 'type: std_msgs/msg/Renamed'));
    const reader = await BagReader.create(copy);
    try {
      const url = reader.getInfo().urls.find((u) => u.ser === 'std_msgs/msg/Renamed');
      assert.ok(url && url.count > 0);
      // The storage's definition is of the other name: none is given for the stated type.
      assert.equal(
        reader.getSchemas().some((s) => s.name === 'std_msgs/msg/Renamed'),
        false,
      );
    } finally {
      reader.close();
    }
  });

  test("an MCAP storage whose statistics state a later start than its first message (rosbag2's old mcap writer)", async () => {
    const copy = join(dir, 'late-statistics');
    cpSync(foreignPath('ros2', 'mcap'), copy, { recursive: true });
    const before = await BagReader.create(copy);
    const { startTimestamp, messageCount } = before.getInfo();
    before.close();
    // The Statistics record's message_start_time, 0.5 s later; the summary CRC cleared (0: not checked).
    const file = join(copy, 'mcap.mcap');
    const bytes = new Uint8Array(readFileSync(file));
    const view = new DataView(bytes.buffer);
    const footer = bytes.length - 8 - 29;
    let at = Number(view.getBigUint64(footer + 9, true));
    while (bytes[at] !== 0x0b) at += 9 + Number(view.getBigUint64(at + 1, true));
    const start = at + 9 + 26;
    view.setBigUint64(start, view.getBigUint64(start, true) + 500_000_000n, true);
    view.setUint32(footer + 25, 0, true);
    writeFileSync(file, bytes);
    const { reader, frames } = await readAll(copy);
    try {
      assert.equal(reader.getInfo().startTimestamp, startTimestamp, 'the start from the chunk indexes');
      assert.equal(frames.length, messageCount);
      assert.ok(frames.every((f) => f.timestamp >= 0));
    } finally {
      reader.close();
    }
  });

  test('messages under a topic id the storage does not define: refused, or skipped and told (tryToFix)', async () => {
    const copy = join(dir, 'undefined-topic');
    cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
    const db = (await loadDriver()).open(join(copy, 'sqlite3.db3'));
    db.exec('UPDATE messages SET topic_id = 99 WHERE id IN (SELECT id FROM messages ORDER BY id LIMIT 2)');
    db.close();
    await assert.rejects(
      BagReader.create(copy),
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_FILE' &&
        /2 messages of topic id 99, which sqlite3.db3 does not define/.test(e.message) &&
        /tryToFix to read the 89 messages/.test(e.message),
    );
    const { reader, frames } = await readAll(copy, { tryToFix: true });
    try {
      const info = reader.getInfo();
      assert.equal(frames.length, 89);
      assert.equal(info.hasCompleted, false);
      const problems = info.metadata?.find((m) => m.name === 'rosbag2.problems')?.values;
      assert.deepEqual(problems, { '0': '2 messages of topic id 99, which sqlite3.db3 does not define' });
    } finally {
      reader.close();
    }
  });

  test('a WAL-mode storage that cannot be opened where it is (its -wal cannot be made) is read from a copy', () =>
    withOwnTempDir(async (tmp) => {
      const copy = join(dir, 'wal-mode');
      cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
      const db = (await loadDriver()).open(join(copy, 'sqlite3.db3'));
      db.exec('PRAGMA journal_mode = WAL');
      db.close();
      // What a read-only mount does to SQLite: no -wal file can be created beside the storage.
      mkdirSync(join(copy, 'sqlite3.db3-wal'));
      const copies = () =>
        readdirSync(tmp).filter(
          (name) => name.startsWith('vlink-rosbag2-') && existsSync(join(tmp, name, 'sqlite3.db3')),
        ).length;
      const { reader, frames } = await readAll(copy);
      try {
        assert.equal(copies(), 1, 'read from a copy');
        assert.equal(frames.length, 91);
        assert.equal(reader.getInfo().fileSize, statSync(join(copy, 'sqlite3.db3')).size);
      } finally {
        reader.close();
      }
      assert.equal(copies(), 0, 'the copy is removed at close');
    }));

  test('a .db3 opened on its own: the metadata rosbag2 keeps inside it, message compression included', async () => {
    const alone = join(dir, 'alone');
    mkdirSync(alone);
    const file = join(alone, 'sqlite3.db3');
    cpSync(foreignPath('ros2', 'sqlite3', 'sqlite3.db3'), file);
    const plain = await readAll(file);
    const bag = plain.reader.getInfo().metadata?.find((m) => m.name === 'rosbag2.metadata')?.values;
    assert.equal(bag?.['version'], '9');
    assert.deepEqual(plain.reader.getInfo().metadata?.find((m) => m.name === 'rosbag2.custom_data')?.values, {
      mission: 'fixtures',
      robot: 'rover-7',
    });
    plain.reader.close();
    // The same storage with every payload compressed on its own, as its stored metadata says.
    const zstd = (await loadMcapCodecs())['zstd']!;
    const db = (await loadDriver()).open(file);
    const rows = db.prepare('SELECT id, data FROM messages').all();
    const update = db.prepare('UPDATE messages SET data = ? WHERE id = ?');
    for (const row of rows) update.run(zstd.compress!(row['data'] as Uint8Array, 3), row['id'] as number);
    update.finalize();
    const last = db.prepare('SELECT id, metadata FROM metadata ORDER BY id DESC LIMIT 1').get()!;
    const text = String(last['metadata']).replace("compression_format: ''", 'compression_format: zstd');
    db.prepare('UPDATE metadata SET metadata = ? WHERE id = ?').run(
      text.replace("compression_mode: ''", 'compression_mode: message'),
      last['id'] as number,
    );
    db.close();
    const compressed = await readAll(file);
    try {
      assert.equal(compressed.reader.getInfo().compressionType, 'zstd');
      assert.deepEqual(
        compressed.frames.map((f) => f.sha256),
        plain.frames.map((f) => f.sha256),
      );
    } finally {
      compressed.reader.close();
    }
  });

  test('a .db3 without any metadata (no yaml, no metadata table) still tells QoS and type hash from its topics', async () => {
    const alone = join(dir, 'bare');
    mkdirSync(alone);
    const file = join(alone, 'sqlite3.db3');
    cpSync(foreignPath('ros2', 'sqlite3', 'sqlite3.db3'), file);
    const db = (await loadDriver()).open(file);
    db.exec('DROP TABLE metadata');
    const kept = db
      .prepare('SELECT offered_qos_profiles AS q, type_description_hash AS h FROM topics ORDER BY id')
      .all();
    db.close();
    const reader = await BagReader.create(file);
    try {
      const topics = reader.getInfo().metadata?.filter((m) => m.name === 'rosbag2.topic') ?? [];
      assert.equal(
        reader.getInfo().metadata?.some((m) => m.name === 'rosbag2.metadata'),
        false,
      );
      assert.deepEqual(
        topics.map((t) => [t.values['offered_qos_profiles'], t.values['type_description_hash']]),
        kept.map((k) => [k['q'], k['h']]),
      );
      assert.ok(topics.every((t) => /reliab/.test(t.values['offered_qos_profiles'] ?? '')));
    } finally {
      reader.close();
    }
  });
});
