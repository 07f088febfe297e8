import assert from 'node:assert/strict';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, test, withOwnTempDir } from '@vlink/fixtures/test';
import { BagError, BagReader, SchemaType } from '@vlink/bag-core';
import { checkFixture } from '../testing/check-fixture.js';
import { expectedUs, foreignPath, loadExpected } from '../testing/expected.js';
import { streamMessages } from '../testing/mcap-stream.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();

function checkBagMetadata(info: ReturnType<BagReader['getInfo']>, relative: string): void {
  const expected = loadExpected(relative);
  const entry = (name: string) => info.metadata?.find((m) => m.name === name)?.values;
  assert.deepEqual(entry('rosbag2.custom_data'), expected['custom_data']);
  const bag = entry('rosbag2.metadata')!;
  assert.equal(bag['version'], String(expected['rosbag2_version']));
  assert.equal(bag['storage_identifier'], expected['storage_identifier']);
  assert.equal(bag['relative_file_paths'], (expected['relative_file_paths'] as string[]).join(','));
  assert.equal(bag['ros_distro'], expected['ros_distro']);
  const topics = info.metadata!.filter((m) => m.name === 'rosbag2.topic');
  assert.deepEqual(
    topics.map((t) => [
      t.values['name'],
      t.values['type'],
      t.values['serialization_format'],
      t.values['type_description_hash'],
    ]),
    expected.topics.map((t) => [t.topic, t.type, t.encoding, t['type_description_hash' as keyof typeof t]]),
  );
  for (const t of topics) assert.match(t.values['offered_qos_profiles']!, /reliab/);
  assert.equal(info.format, 'rosbag2');
  assert.ok(info.urls.every((u) => u.schemaType === SchemaType.Cdr && u.encoding === 'cdr'));
}

describe('ROS 2 bag folders written by rosbags read as rosbags reads them', () => {
  test('sqlite3 storage: messages in timestamp order, header stamps as publish times', async () => {
    const { reader, info, frames } = await checkFixture('ros2/sqlite3');
    try {
      checkBagMetadata(info, 'ros2/sqlite3');
      assert.equal(info.storageType, 'rosbag2-sqlite3');
      for (let i = 1; i < frames.length; i++) assert.ok(frames[i]!.timestamp >= frames[i - 1]!.timestamp);
    } finally {
      reader.close();
    }
  });

  test('mcap storage: log-time order, publish time and sequence from the MCAP records', async () => {
    const stream = await streamMessages(foreignPath('ros2', 'mcap', 'mcap.mcap'));
    // One message was written late: file order and log-time order differ.
    const byTime = [...stream].sort((a, b) => (a.logTime < b.logTime ? -1 : a.logTime > b.logTime ? 1 : 0));
    assert.notDeepEqual(byTime, stream);
    const byKey = new Map(stream.map((m) => [`${m.topic} ${m.logTime} ${m.sha256}`, m]));
    const of = (m: { topic: string; log_time_ns: string; sha256: string }) =>
      byKey.get(`${m.topic} ${m.log_time_ns} ${m.sha256}`)!;
    const { reader, info, frames, startMs } = await checkFixture('ros2/mcap', {
      // In rosbags' order (log time), as rosbag2 plays the storage.
      publishTime: (m, start) => expectedUs(String(of(m).publishTime), start),
      sequence: (m) => of(m).sequence,
    });
    try {
      checkBagMetadata(info, 'ros2/mcap');
      assert.equal(info.storageType, 'rosbag2-mcap');
      assert.deepEqual(
        frames.map((f) => [f.url, f.timestamp, f.sha256]),
        // A stable sort of file order: ties stay in file order, as @mcap/core's indexed reader gives them.
        byTime.map((m) => [m.topic, expectedUs(String(m.logTime), startMs), m.sha256]),
      );
    } finally {
      reader.close();
    }
  });

  test('a single .db3 opens on its own, with its folder metadata', async () => {
    const folder = await readAll(foreignPath('ros2', 'sqlite3'));
    const file = await readAll(foreignPath('ros2', 'sqlite3', 'sqlite3.db3'));
    try {
      assert.deepEqual(
        file.frames.map((f) => [f.url, f.timestamp, f.sha256, f.publishTime]),
        folder.frames.map((f) => [f.url, f.timestamp, f.sha256, f.publishTime]),
      );
      assert.deepEqual(file.reader.getInfo().metadata, folder.reader.getInfo().metadata);
    } finally {
      folder.reader.close();
      file.reader.close();
    }
  });

  test('url and time filters', async () => {
    const reader = await BagReader.create(foreignPath('ros2', 'sqlite3'));
    try {
      const all: Array<[string, number]> = [];
      for await (const f of reader.frames()) all.push([f.url, f.timestamp]);
      const window: Array<[string, number]> = [];
      for await (const f of reader.frames({ filterUrls: ['/imu'], beginTime: 500, endTime: 1000 }))
        window.push([f.url, f.timestamp]);
      assert.deepEqual(
        window,
        all.filter(([url, t]) => url === '/imu' && t >= 500_000 && t <= 1_000_999),
      );
      assert.ok(window.length > 5);
    } finally {
      reader.close();
    }
  });

  test('zstd file compression (sqlite3): read from a decompressed copy, which is removed at close', () =>
    withOwnTempDir(async (tmp) => {
      const copies = () => readdirSync(tmp).filter((name) => name.startsWith('vlink-rosbag2-')).length;
      const { reader, info } = await checkFixture('ros2/sqlite3-zstd-file');
      try {
        assert.equal(copies(), 1);
        checkBagMetadata(info, 'ros2/sqlite3-zstd-file');
        assert.equal(info.storageType, 'rosbag2-sqlite3');
        assert.equal(info.compressionType, 'zstd');
        // The bag's own file, as it is on disk.
        assert.equal(
          info.fileSize,
          statSync(foreignPath('ros2', 'sqlite3-zstd-file', 'sqlite3-zstd-file.db3.zstd')).size,
        );
      } finally {
        reader.close();
      }
      assert.equal(copies(), 0);
    }));

  test('zstd message compression (mcap): every payload decompressed, MCAP publish times and sequences kept', async () => {
    // The MCAP records hold the compressed payloads: match them by topic and log time.
    const stream = await streamMessages(foreignPath('ros2', 'mcap-zstd-message', 'mcap-zstd-message.mcap'));
    const byKey = new Map(stream.map((m) => [`${m.topic} ${m.logTime}`, m]));
    assert.equal(byKey.size, stream.length);
    const of = (m: { topic: string; log_time_ns: string }) => byKey.get(`${m.topic} ${m.log_time_ns}`)!;
    const { reader, info, frames } = await checkFixture('ros2/mcap-zstd-message', {
      publishTime: (m, start) => expectedUs(String(of(m).publishTime), start),
      sequence: (m) => of(m).sequence,
    });
    try {
      checkBagMetadata(info, 'ros2/mcap-zstd-message');
      assert.equal(info.compressionType, 'zstd');
      assert.equal(frames.length, stream.length);
    } finally {
      reader.close();
    }
  });

  test('a served folder (confineTo): storage files and metadata.yaml may not lead out of it', async () => {
    const base = mkdtempSync(join(tmpdir(), 'vlink-ros2-confine-'));
    try {
      const root = join(base, 'root');
      const source = foreignPath('ros2', 'sqlite3');
      const yaml = readFileSync(join(source, 'metadata.yaml'), 'utf8');
      cpSync(join(source, 'sqlite3.db3'), join(base, 'outside.db3'));
      // metadata.yaml naming a storage file beside the root
      const dotdot = join(root, 'dotdot');
      mkdirSync(dotdot, { recursive: true });
      writeFileSync(join(dotdot, 'metadata.yaml'), yaml.replace('- sqlite3.db3', '- ../../outside.db3'));
      // a storage file that is a symbolic link out of the root
      const linked = join(root, 'linked');
      mkdirSync(linked);
      writeFileSync(join(linked, 'metadata.yaml'), yaml);
      symlinkSync(join(base, 'outside.db3'), join(linked, 'sqlite3.db3'));
      // metadata.yaml itself a link out of the root
      const yamlLink = join(root, 'yaml-link');
      mkdirSync(yamlLink);
      cpSync(join(source, 'sqlite3.db3'), join(yamlLink, 'sqlite3.db3'));
      writeFileSync(join(base, 'metadata.yaml'), yaml);
      symlinkSync(join(base, 'metadata.yaml'), join(yamlLink, 'metadata.yaml'));
      for (const folder of [dotdot, linked, yamlLink]) {
        await assert.rejects(
          BagReader.create(folder, { confineTo: root }),
          (e: unknown) =>
            BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /outside the directory/.test(e.message),
          folder,
        );
        // Not served: a local user may keep such a folder.
        const reader = await BagReader.create(folder);
        assert.equal(reader.getInfo().messageCount, 91);
        reader.close();
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('a damaged metadata.yaml prints no YAML warnings on the process (a CLI or server never asked for them)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'vlink-ros2-tag-'));
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const source = foreignPath('ros2', 'sqlite3');
      cpSync(join(source, 'sqlite3.db3'), join(folder, 'sqlite3.db3'));
      // A flipped byte turning a key into an unknown tag (found by fuzzing: the yaml library warned on stderr).
      const yaml = readFileSync(join(source, 'metadata.yaml'), 'utf8');
      writeFileSync(join(folder, 'metadata.yaml'), yaml.replace('storage_identifier:', '!storage_identifier:'));
      await BagReader.create(folder).then(
        (reader) => reader.close(),
        (error: unknown) => assert.ok(BagError.isInstance(error), String(error)),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
