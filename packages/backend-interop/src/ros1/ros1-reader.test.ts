import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BagError, BagReader, SchemaType } from '@vlink/bag-core';
import { checkFixture } from '../testing/check-fixture.js';
import { foreignPath, loadExpected } from '../testing/expected.js';
import { registerAll } from '../testing/register.js';

registerAll();

describe('ROS 1 bags written by rosbags read as rosbags reads them', () => {
  for (const [name, compression] of [
    ['plain', 'none'],
    ['bz2', 'bz2'],
    ['lz4', 'lz4'],
  ] as const) {
    test(`${name}.bag`, async () => {
      const { reader, info, frames, expected } = await checkFixture(`ros1/${name}.bag`);
      try {
        assert.equal(info.format, 'bag');
        assert.equal(info.compressionType, compression);
        assert.ok(info.urls.every((u) => u.schemaType === SchemaType.Unknown && u.encoding === 'ros1'));
        // Log-time order, like rosbag's readers, although one message was written late.
        for (let i = 1; i < frames.length; i++)
          assert.ok(frames[i]!.timestamp >= frames[i - 1]!.timestamp, `order at ${i}`);
        // Messages without a std_msgs/Header have no publish time or sequence.
        assert.ok(
          frames
            .filter((f) => f.url === '/chatter')
            .every((f) => f.publishTime === undefined && f.sequence === undefined),
        );
        const connections = (info.metadata ?? []).filter((m) => m.name === 'rosbag.connection');
        assert.deepEqual(
          connections.map((c) => [
            c.values['topic'],
            c.values['type'],
            c.values['md5sum'],
            c.values['callerid'],
            c.values['latching'],
          ]),
          expected.topics.map((t) => [
            t.topic,
            t.type,
            t['md5sum' as keyof typeof t],
            t['callerid' as keyof typeof t] ?? undefined,
            t['latching' as keyof typeof t] === null ? undefined : String(t['latching' as keyof typeof t]),
          ]),
        );
      } finally {
        reader.close();
      }
    });
  }

  test('same-name.bag: two versions of one type, each topic decoded with its own connection definition', async () => {
    // The second version has the first's byte layout (int32 a / float32 z): picked by name, it decodes without error
    // into the wrong field. checkFixture decodes the sampled messages of both topics as rosbags did.
    const { reader, info, schemas } = await checkFixture('ros1/same-name.bag');
    try {
      const [v1, v2] = ['/reading/v1', '/reading/v2'].map((topic) => info.urls.find((u) => u.url === topic)!);
      assert.equal(schemas.length, 2);
      assert.deepEqual(
        schemas.map((s) => s.name),
        ['vlink_test/Reading', 'vlink_test/Reading'],
      );
      assert.notEqual(v1!.schemaIndex, v2!.schemaIndex);
      assert.match(new TextDecoder().decode(schemas[v1!.schemaIndex!]!.data), /int32 a/);
      assert.match(new TextDecoder().decode(schemas[v2!.schemaIndex!]!.data), /float32 z/);
    } finally {
      reader.close();
    }
  });

  test('a bag closed without a message: its empty index at the end of the file', async () => {
    const path = foreignPath('ros1', 'empty.bag');
    assert.equal(loadExpected('ros1/empty.bag').messages.length, 0);
    const reader = await BagReader.create(path);
    try {
      const info = reader.getInfo();
      assert.deepEqual([info.messageCount, info.urls.length, info.hasCompleted], [0, 0, true]);
      let frames = 0;
      for await (const _ of reader.frames()) frames++;
      assert.equal(frames, 0);
    } finally {
      reader.close();
    }
    // The same header in a bag whose index is missing (cut where the index would start) is still refused.
    const bytes = new Uint8Array(readFileSync(foreignPath('ros1', 'plain.bag')));
    const field = new TextEncoder().encode('index_pos=');
    const at = bytes.findIndex((_, i) => field.every((b, k) => bytes[i + k] === b)) + field.length;
    const indexPos = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(at, true));
    assert.ok(indexPos > 4096 && indexPos < bytes.length);
    const cut = join(mkdtempSync(join(tmpdir(), 'vlink-ros1-')), 'cut.bag');
    writeFileSync(cut, bytes.subarray(0, indexPos));
    await assert.rejects(BagReader.create(cut), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    rmSync(dirname(cut), { recursive: true, force: true });
  });

  test('chunk infos that all claim the earliest start: every chunk overlaps, the merge still gives log-time order', async () => {
    const bytes = new Uint8Array(readFileSync(foreignPath('ros1', 'plain.bag')));
    const field = new TextEncoder().encode('start_time=');
    const patched = bytes.slice();
    let infos = 0;
    for (let i = 0; i + field.length + 8 <= patched.length; i++) {
      if (!field.every((b, k) => patched[i + k] === b)) continue;
      patched.fill(0, i + field.length, i + field.length + 8); // sec and nsec 0: before every message
      infos++;
    }
    assert.ok(infos > 3, `${infos} chunk infos`);
    const dir = mkdtempSync(join(tmpdir(), 'vlink-ros1-'));
    try {
      const path = join(dir, 'overlapping.bag');
      writeFileSync(path, patched);
      const read = async (file: string) => {
        const reader = await BagReader.create(file);
        const out: Array<[string, number, number]> = [];
        try {
          for await (const f of reader.frames()) out.push([f.url, f.timestamp, f.data.length]);
        } finally {
          reader.close();
        }
        return out;
      };
      const original = await read(foreignPath('ros1', 'plain.bag'));
      const overlapping = await read(path);
      // Times count from the earliest chunk start, now 0: compare the order and the gaps, not the base.
      const shape = (frames: Array<[string, number, number]>) =>
        frames.map(([url, t, n]) => [url, t - frames[0]![1], n]);
      assert.deepEqual(shape(overlapping), shape(original));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ROS 1 records copied over others (no CRC says so)', () => {
  /** Offset, length and op of every top-level record after the version line. */
  function records(bytes: Uint8Array): Array<{ at: number; length: number; op: number }> {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out: Array<{ at: number; length: number; op: number }> = [];
    for (let at = 13; at + 8 <= bytes.length; ) {
      const headerLength = view.getUint32(at, true);
      const length = 8 + headerLength + view.getUint32(at + 4 + headerLength, true);
      const header = Buffer.from(bytes.subarray(at + 4, at + 4 + headerLength)).toString('latin1');
      out.push({ at, length, op: header.charCodeAt(header.indexOf('op=') + 3) });
      at += length;
    }
    return out;
  }

  async function readAll(path: string): Promise<number> {
    const reader = await BagReader.create(path);
    try {
      let n = 0;
      for await (const _ of reader.frames()) n++;
      return n;
    } finally {
      reader.close();
    }
  }

  test('a chunk copied over another, or a chunk info over another: CORRUPT_FILE, not messages twice', async () => {
    // Found by hand, copying every record of plain.bag (91 messages) over every other: 101 read, 16 of them twice.
    const bytes = readFileSync(foreignPath('ros1', 'plain.bag'));
    const all = records(bytes);
    const chunks = all.filter((r) => r.op === 0x05);
    const infos = all.filter((r) => r.op === 0x06);
    const dir = mkdtempSync(join(tmpdir(), 'vlink-ros1-copied-'));
    try {
      assert.equal(await readAll(foreignPath('ros1', 'plain.bag')), 91);
      for (const [from, to, words] of [
        [chunks[1]!, chunks[0]!, /chunk is not the one its chunk info describes/],
        [infos[0]!, infos[1]!, /two chunk infos describe the chunk at this offset/],
      ] as const) {
        const damaged = Buffer.from(bytes);
        damaged.copyWithin(to.at, from.at, from.at + from.length);
        const path = join(dir, `copied-${from.at}-${to.at}.bag`);
        writeFileSync(path, damaged);
        await assert.rejects(
          readAll(path),
          (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && words.test(e.message),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a bag with another appended: CORRUPT_FILE naming the bytes after the index; tryToFix reads the first', async () => {
    // Found by hand: `cat plain.bag plain.bag` read as one bag, complete, without a word of the second.
    const bytes = readFileSync(foreignPath('ros1', 'plain.bag'));
    const dir = mkdtempSync(join(tmpdir(), 'vlink-ros1-appended-'));
    try {
      const path = join(dir, 'twice.bag');
      writeFileSync(path, Buffer.concat([bytes, bytes]));
      await assert.rejects(
        readAll(path),
        (e: unknown) =>
          BagError.isInstance(e) &&
          e.code === 'CORRUPT_FILE' &&
          e.message.startsWith(`${bytes.length} bytes follow the bag's index, which rosbag does not read`),
      );
      const reader = await BagReader.create(path, { tryToFix: true });
      try {
        let n = 0;
        for await (const _ of reader.frames()) n++;
        assert.equal(n, 91);
        assert.equal(reader.getInfo().hasCompleted, false);
      } finally {
        reader.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
