import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapStreamReader, McapWriter, TempBuffer } from '@mcap/core';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { loadMcapCodecs } from '../common/lz4.js';
import { absentRecording, foreignPath } from '../testing/expected.js';
import { type ReadFrame, readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-alone-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** url and payload digest of every frame, the way two reads of the same messages are compared. */
async function payloads(path: string): Promise<string[]> {
  const { reader, frames } = await readAll(path);
  reader.close();
  return frames.map((f) => `${f.url} ${f.sha256}`);
}

function cdrPayloads(frames: ReadFrame[]): boolean {
  return frames.length > 0 && frames.every((f) => f.data[0] === 0 && f.data[1]! <= 3);
}

/**
 * The messages of an MCAP file written again by `@mcap/core` (our own writer's independent reference), with its
 * metadata records as `metadata` makes them (dropped: undefined) and each payload through `payload`.
 */
async function rewriteMcap(
  source: string,
  target: string,
  metadata: (name: string, values: Map<string, string>) => Map<string, string> | undefined,
  payload: (data: Uint8Array, index: number) => Uint8Array = (data) => data,
): Promise<void> {
  const codecs = await loadMcapCodecs();
  const stream = new McapStreamReader({
    decompressHandlers: { zstd: (data, size) => codecs['zstd']!.decompress(data, Number(size)) },
  });
  stream.append(readFileSync(source));
  const buffer = new TempBuffer();
  const writer = new McapWriter({ writable: buffer });
  await writer.start({ profile: 'ros2', library: 'vlink-bag test' });
  const schemaIds = new Map<number, number>();
  const channelIds = new Map<number, number>();
  let index = 0;
  for (let record = stream.nextRecord(); record; record = stream.nextRecord()) {
    if (record.type === 'Schema')
      schemaIds.set(
        record.id,
        await writer.registerSchema({ name: record.name, encoding: record.encoding, data: record.data }),
      );
    else if (record.type === 'Channel')
      channelIds.set(
        record.id,
        await writer.registerChannel({
          topic: record.topic,
          messageEncoding: record.messageEncoding,
          schemaId: schemaIds.get(record.schemaId) ?? 0,
          metadata: record.metadata,
        }),
      );
    else if (record.type === 'Message')
      await writer.addMessage({
        ...record,
        channelId: channelIds.get(record.channelId)!,
        data: payload(record.data, index++),
      });
    else if (record.type === 'Metadata') {
      const values = metadata(record.name, record.metadata);
      if (values) await writer.addMetadata({ name: record.name, metadata: values });
    }
  }
  await writer.end();
  writeFileSync(target, buffer.get());
}

const zstdMessageMcap = () => foreignPath('ros2', 'mcap-zstd-message', 'mcap-zstd-message.mcap');

describe('a rosbag2 storage file compressed per message, opened on its own', () => {
  test('an .mcap whose rosbag2 record says compression_mode message yields the payloads its folder does', async () => {
    const alone = join(dir, 'alone.mcap');
    copyFileSync(zstdMessageMcap(), alone);
    const { reader, frames } = await readAll(alone);
    try {
      assert.equal(reader.getInfo().format, 'mcap');
      assert.ok(cdrPayloads(frames), 'CDR payloads, not zstd frames');
    } finally {
      reader.close();
    }
    assert.deepEqual(
      frames.map((f) => `${f.url} ${f.sha256}`),
      await payloads(foreignPath('ros2', 'mcap-zstd-message')),
    );
  });

  test('without that record, cdr payloads that begin with the zstd magic are decompressed all the same', async () => {
    const bare = join(dir, 'bare.mcap');
    await rewriteMcap(zstdMessageMcap(), bare, () => undefined);
    const { reader, frames } = await readAll(bare);
    try {
      assert.equal(
        reader.getInfo().metadata?.some((m) => m.name === 'rosbag2'),
        false,
      );
      assert.ok(cdrPayloads(frames));
    } finally {
      reader.close();
    }
    assert.deepEqual(
      frames.map((f) => `${f.url} ${f.sha256}`),
      await payloads(foreignPath('ros2', 'mcap-zstd-message')),
    );
  });

  test('a rosbag2 record whose metadata does not parse says nothing: the zstd magic still tells', async () => {
    const garbled = join(dir, 'garbled-record.mcap');
    await rewriteMcap(zstdMessageMcap(), garbled, (name, values) =>
      name === 'rosbag2' ? new Map([...values].map(([k]) => [k, '{ not: yaml'])) : values,
    );
    const { reader, frames } = await readAll(garbled);
    reader.close();
    assert.ok(cdrPayloads(frames));
    assert.deepEqual(
      frames.map((f) => `${f.url} ${f.sha256}`),
      await payloads(foreignPath('ros2', 'mcap-zstd-message')),
    );
  });

  test('a payload with the zstd magic that does not decompress fails the read with CORRUPT_DATA, never passes', async () => {
    const garbled = join(dir, 'garbled.mcap');
    await rewriteMcap(
      zstdMessageMcap(),
      garbled,
      () => undefined,
      (data, i) => (i === 5 ? new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff]) : data),
    );
    const reader = await BagReader.create(garbled);
    try {
      await assert.rejects(
        (async () => {
          for await (const _ of reader.frames()) {
            // reading is the test
          }
        })(),
        (error: unknown) => BagError.isInstance(error) && error.code === 'CORRUPT_DATA' && error.url !== undefined,
      );
    } finally {
      reader.close();
    }
  });

  test('a record naming a compression rosbag2 has no plugin for is refused by name', async () => {
    const lz4 = join(dir, 'lz4.mcap');
    await rewriteMcap(zstdMessageMcap(), lz4, (name, values) =>
      name === 'rosbag2'
        ? new Map([...values].map(([k, v]) => [k, v.replace('compression_format: zstd', 'compression_format: lz4')]))
        : values,
    );
    await assert.rejects(
      BagReader.create(lz4),
      (error: unknown) =>
        BagError.isInstance(error) && error.code === 'UNSUPPORTED_FORMAT' && /lz4/.test(error.message),
    );
  });

  test('plain CDR in an .mcap is handed out as it is', async () => {
    const { reader, frames } = await readAll(foreignPath('ros2', 'mcap', 'mcap.mcap'));
    reader.close();
    assert.ok(cdrPayloads(frames));
    assert.deepEqual(
      frames.map((f) => `${f.url} ${f.sha256}`),
      await payloads(foreignPath('ros2', 'mcap')),
    );
  });

  test('a .db3 decompresses by its metadata table, or without one by the zstd magic', async () => {
    const codecs = await loadMcapCodecs();
    const driver = await loadDriver();
    const expected = await payloads(foreignPath('ros2', 'sqlite3', 'sqlite3.db3'));
    for (const embedded of [true, false]) {
      const folder = join(dir, embedded ? 'embedded' : 'no-metadata');
      mkdirSync(folder);
      const file = join(folder, 'compressed_0.db3');
      copyFileSync(foreignPath('ros2', 'sqlite3', 'sqlite3.db3'), file);
      // What rosbag2's message compression writes: every payload a zstd frame of its own.
      const db = driver.open(file);
      try {
        const update = db.prepare('UPDATE messages SET data = ? WHERE id = ?');
        for (const row of db.prepare('SELECT id, data FROM messages').all())
          update.run(codecs['zstd']!.compress!(row['data'] as Uint8Array, 3), row['id']!);
        update.finalize();
        if (embedded)
          db.exec(
            "UPDATE metadata SET metadata = replace(replace(metadata, 'compression_mode: ''''', 'compression_mode: message'), 'compression_format: ''''', 'compression_format: zstd')",
          );
        else db.exec('DROP TABLE metadata');
      } finally {
        db.close();
      }
      const { reader, frames } = await readAll(file);
      try {
        const bag = reader.getInfo().metadata?.find((m) => m.name === 'rosbag2.metadata')?.values;
        assert.equal(bag?.['compression_mode'], embedded ? 'message' : undefined);
        assert.ok(cdrPayloads(frames));
      } finally {
        reader.close();
      }
      assert.deepEqual(
        frames.map((f) => `${f.url} ${f.sha256}`),
        expected,
      );
    }
  });

  const real = 'real/ros2/v4-sqlite3-zstd-message-split';
  test('a real rosbag2 MESSAGE-compressed .db3 copied out of its folder reads as in it', {
    skip: absentRecording(real),
  }, async () => {
    const file = join(foreignPath(real), 'message_compression_1.db3');
    const alone = join(dir, 'message_compression_1.db3');
    copyFileSync(file, alone);
    const inFolder = await payloads(file);
    assert.ok(inFolder.length > 0);
    assert.deepEqual(await payloads(alone), inFolder);
  });
});
