import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapWriter, TempBuffer } from '@mcap/core';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader, BagWriter, SchemaType } from '@vlink/bag-core';
import { loadMcapCodecs } from '../common/lz4.js';
import { checkFixture } from '../testing/check-fixture.js';
import { foreignPath } from '../testing/expected.js';
import { readAll, sha256 } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-interop-mcap-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const FILES = [
  'json.mcap',
  'protobuf.mcap',
  'ros1.mcap',
  'ros2.mcap',
  'unchunked.mcap',
  'out-of-order.mcap',
  'cbor.mcap',
  // Two schemas per type name (two versions of a message), one topic each: decoded with each topic's own schema.
  'same-name.mcap',
];

describe('plain MCAP files written by the mcap Python writers read as mcap.reader reads them', () => {
  for (const name of FILES) {
    test(name, async () => {
      const { reader, info, expected } = await checkFixture(`mcap/${name}`);
      try {
        assert.equal(info.format, 'mcap');
        const [header, ...rest] = info.metadata ?? [];
        assert.deepEqual(header, {
          name: 'mcap.header',
          values: { profile: expected['profile'], library: expected['library'] },
        });
        // Channel metadata first, then the file's metadata records in file order.
        const channels = rest.filter((m) => m.name.startsWith('mcap.channel.'));
        for (const topic of expected.topics) {
          const own = channels.find((m) => m.name === `mcap.channel.${topic.topic}`);
          assert.deepEqual(own?.values ?? {}, topic.channel_metadata ?? {}, `${topic.topic} channel metadata`);
        }
        const records = rest.filter((m) => !m.name.startsWith('mcap.channel.'));
        assert.deepEqual(
          records,
          (expected.metadata ?? []).map((m) => ({ name: m.name, values: m.metadata })),
        );
        const attachments = info.attachments ?? [];
        assert.deepEqual(
          attachments.map((a) => ({
            name: a.name,
            media_type: a.mediaType,
            log_time_ns: a.logTime,
            create_time_ns: a.createTime,
            size: a.size,
          })),
          (expected.attachments ?? []).map(({ sha256: _s, ...a }) => a),
        );
        for (const [i, a] of (expected.attachments ?? []).entries())
          assert.equal(sha256(reader.getAttachment(i)), a.sha256);
        assert.throws(() => reader.getAttachment(attachments.length), { code: 'NOT_FOUND' });
      } finally {
        reader.close();
      }
    });
  }

  test('json channels are Raw, protobuf Protobuf, cdr Cdr, ros1 has no family', async () => {
    const families = new Map<string, SchemaType>();
    for (const name of FILES) {
      const r = await BagReader.create(foreignPath('mcap', name));
      for (const u of r.getInfo().urls) families.set(`${name} ${u.url}`, u.schemaType);
      r.close();
    }
    assert.equal(families.get('json.mcap /json/status'), SchemaType.Raw);
    assert.equal(families.get('json.mcap /json/schemaless'), SchemaType.Raw);
    assert.equal(families.get('json.mcap /raw/bytes'), SchemaType.Unknown);
    assert.equal(families.get('protobuf.mcap /pb/pose'), SchemaType.Protobuf);
    assert.equal(families.get('ros2.mcap /imu'), SchemaType.Cdr);
    assert.equal(families.get('ros1.mcap /imu'), SchemaType.Unknown);
  });
});

describe('the compression a file names', () => {
  test('is that of its chunks, also when the summary has no chunk indexes (the chunks are scanned)', async () => {
    const codecs = await loadMcapCodecs();
    for (const useChunkIndex of [true, false]) {
      const buffer = new TempBuffer();
      const writer = new McapWriter({
        writable: buffer,
        useChunkIndex,
        useMessageIndex: useChunkIndex,
        compressChunk: (data) => ({ compression: 'zstd', compressedData: codecs['zstd']!.compress!(data, 1) }),
      });
      await writer.start({ profile: '', library: 'test' });
      const channelId = await writer.registerChannel({
        topic: '/t',
        messageEncoding: 'json',
        schemaId: 0,
        metadata: new Map(),
      });
      for (let i = 0; i < 3; i++)
        await writer.addMessage({
          channelId,
          sequence: i,
          logTime: 1_000_000_000n + BigInt(i),
          publishTime: 0n,
          data: Uint8Array.of(0x31),
        });
      await writer.end();
      const path = join(dir, `zstd-${useChunkIndex}.mcap`);
      writeFileSync(path, buffer.get());
      const reader = await BagReader.create(path);
      try {
        assert.equal(reader.getInfo().compressionType, 'zstd', `chunk indexes: ${useChunkIndex}`);
        assert.equal(reader.getInfo().messageCount, 3);
      } finally {
        reader.close();
      }
    }
  });
});

describe('MCAP found by its magic', () => {
  for (const name of ['recording', 'recording.dat']) {
    test(`a copy named "${name}" opens as MCAP`, async () => {
      const copy = join(dir, name);
      copyFileSync(foreignPath('mcap', 'protobuf.mcap'), copy);
      const original = await readAll(foreignPath('mcap', 'protobuf.mcap'));
      const sniffed = await readAll(copy);
      try {
        assert.equal(sniffed.reader.getInfo().format, 'mcap');
        assert.deepEqual(
          sniffed.frames.map((f) => [f.url, f.timestamp, f.sha256]),
          original.frames.map((f) => [f.url, f.timestamp, f.sha256]),
        );
        assert.equal(original.frames.length, 45);
      } finally {
        sniffed.reader.close();
        original.reader.close();
      }
    });
  }

  test('a file with neither a known extension nor a known magic is UNSUPPORTED_FORMAT', async () => {
    const copy = join(dir, 'notes.dat');
    copyFileSync(foreignPath('README.md'), copy);
    await assert.rejects(BagReader.create(copy), { code: 'UNSUPPORTED_FORMAT' });
  });
});

test('a VLink-profile file named .mcap is read by the .vcap reader (actions kept)', async () => {
  const vcap = join(dir, 'own.vcap');
  const writer = await BagWriter.create(vcap, { syncMode: true, startTimestamp: 1_700_000_000_000 });
  for (let i = 0; i < 5; i++)
    writer.push({
      timestamp: i * 1000,
      url: 'dds://a',
      data: new Uint8Array([i]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: 6,
    });
  await writer.close();
  const renamed = join(dir, 'own.mcap');
  copyFileSync(vcap, renamed);
  const { reader, frames } = await readAll(renamed);
  try {
    assert.equal(reader.getInfo().format, 'vcap');
    assert.deepEqual(
      frames.map((f) => [f.url, f.timestamp, [...f.data]]),
      [0, 1, 2, 3, 4].map((i) => ['dds://a', i * 1000, [i]]),
    );
  } finally {
    reader.close();
  }
});

test('writing a read-only foreign format is refused, naming why (.mcap is written, .bag is not)', async () => {
  await assert.rejects(BagWriter.create(join(dir, 'out.bag')), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'UNSUPPORTED_FORMAT');
    assert.match(error.message, /\.bag is read-only/);
    return true;
  });
});
