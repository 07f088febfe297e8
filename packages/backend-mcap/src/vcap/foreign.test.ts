import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { McapWriter as FoxgloveWriter } from '@mcap/core';
import { ActionType, SchemaType } from '@vlink/bag-core';
import { loadCodecs } from '../codecs.js';
import { openBytes, readFrames } from './vcap.test.helper.js';

// MCAP files from other writers (here @mcap/core's McapWriter with profile ros2) open read-only: urls are topics,
// sers are schema names, families come from the schema (or message) encoding, the start is the first message.

const T0 = 1_700_000_000_123_456_789n;
const text = (s: string) => new TextEncoder().encode(s);

/** LZ4 frame with stored (uncompressed) blocks: all wasm-lz4 needs to decode, no compressor required. */
function lz4Frame(data: Uint8Array): Uint8Array {
  const descriptor = Uint8Array.of(0x60, 0x40); // version 1, independent blocks; 64 KiB blocks
  const blocks: number[] = [];
  for (let at = 0; at < data.length; at += 65536) {
    const block = data.subarray(at, at + 65536);
    const n = (block.length | 0x80000000) >>> 0;
    blocks.push(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24, ...block);
  }
  return Uint8Array.from([
    0x04,
    0x22,
    0x4d,
    0x18,
    ...descriptor,
    (xxh32(descriptor) >>> 8) & 0xff,
    ...blocks,
    0,
    0,
    0,
    0,
  ]);
}

function xxh32(input: Uint8Array): number {
  const P1 = 2654435761,
    P2 = 2246822519,
    P3 = 3266489917,
    P4 = 668265263,
    P5 = 374761393;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  if (input.length >= 16) throw new Error('short inputs only');
  let h = (P5 + input.length) >>> 0;
  let i = 0;
  for (; i + 4 <= input.length; i += 4) {
    const w = (input[i]! | (input[i + 1]! << 8) | (input[i + 2]! << 16) | (input[i + 3]! << 24)) >>> 0;
    h = Math.imul(rotl((h + Math.imul(w, P3)) >>> 0, 17), P4) >>> 0;
  }
  for (; i < input.length; i++) h = Math.imul(rotl((h + Math.imul(input[i]!, P5)) >>> 0, 11), P1) >>> 0;
  h = Math.imul(h ^ (h >>> 15), P2) >>> 0;
  h = Math.imul(h ^ (h >>> 13), P3) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

async function ros2File(options: { compression?: 'zstd' | 'lz4'; chunks?: boolean } = {}): Promise<Uint8Array> {
  const codecs = await loadCodecs();
  const parts: Uint8Array[] = [];
  let size = 0n;
  const writer = new FoxgloveWriter({
    writable: {
      write: async (b: Uint8Array) => {
        parts.push(b.slice());
        size += BigInt(b.length);
      },
      position: () => size,
    },
    useChunks: options.chunks ?? true,
    chunkSize: 2048,
    ...(options.compression === 'zstd'
      ? { compressChunk: (d: Uint8Array) => ({ compression: 'zstd', compressedData: codecs['zstd']!.compress!(d, 1) }) }
      : {}),
    ...(options.compression === 'lz4'
      ? { compressChunk: (d: Uint8Array) => ({ compression: 'lz4', compressedData: lz4Frame(d) }) }
      : {}),
  });
  await writer.start({ profile: 'ros2', library: 'mcap-ts test' });
  const str = await writer.registerSchema({
    name: 'std_msgs/msg/String',
    encoding: 'ros2msg',
    data: text('string data'),
  });
  const log = await writer.registerSchema({
    name: 'foxglove.Log',
    encoding: 'jsonschema',
    data: text('{"type":"object"}'),
  });
  const pb = await writer.registerSchema({ name: 'pb.Pose', encoding: 'protobuf', data: text('descriptor') });
  const channels = [
    await writer.registerChannel({ topic: '/chatter', messageEncoding: 'cdr', schemaId: str, metadata: new Map() }),
    await writer.registerChannel({ topic: '/log', messageEncoding: 'json', schemaId: log, metadata: new Map() }),
    await writer.registerChannel({
      topic: '/pose',
      messageEncoding: 'protobuf',
      schemaId: pb,
      metadata: new Map([['action', 'Sub']]),
    }),
    await writer.registerChannel({ topic: '/raw', messageEncoding: 'json', schemaId: 0, metadata: new Map() }),
  ];
  for (let i = 0; i < 80; i++) {
    const t = T0 + BigInt(i) * 10_000_000n;
    await writer.addMessage({
      channelId: channels[i % 4]!,
      sequence: i,
      logTime: t,
      publishTime: t,
      data: text(`message ${i} `.repeat(8)),
    });
  }
  await writer.end();
  const out = new Uint8Array(Number(size));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

describe('foreign MCAP files', () => {
  for (const compression of [undefined, 'zstd', 'lz4'] as const) {
    test(`ros2 profile, ${compression ?? 'uncompressed'} chunks`, async () => {
      const reader = await openBytes(await ros2File(compression ? { compression } : {}), false, 'ros.mcap');
      const info = reader.info();
      assert.equal(info.storageType, 'mcap');
      assert.equal(info.startTimestamp, 1_700_000_000_123);
      assert.equal(info.blankDuration, 0);
      assert.equal(info.totalDuration, 790);
      assert.equal(info.messageCount, 80);
      assert.equal(info.hasCompleted, true);
      assert.equal(info.compressionType, compression ?? 'None');
      assert.deepEqual(
        info.urls.map((u) => [u.index, u.url, u.type, u.action, u.ser, u.schemaType, u.count]),
        [
          [0, '/chatter', 'Event', 'Unknown', 'std_msgs/msg/String', SchemaType.Cdr, 20],
          [1, '/log', 'Event', 'Unknown', 'foxglove.Log', SchemaType.Raw, 20],
          [2, '/pose', 'Event', 'Sub', 'pb.Pose', SchemaType.Protobuf, 20],
          [3, '/raw', 'Event', 'Unknown', '', SchemaType.Raw, 20],
        ],
      );
      const frames = readFrames(reader);
      assert.equal(frames.length, 80);
      assert.deepEqual(
        frames.slice(0, 3).map((f) => [f.timestamp, f.url, f.actionType, f.serType, f.schemaType]),
        [
          [456, '/chatter', ActionType.Unknown, 'std_msgs/msg/String', SchemaType.Cdr],
          [10_456, '/log', ActionType.Unknown, 'foxglove.Log', SchemaType.Raw],
          [20_456, '/pose', ActionType.Subscribe, 'pb.Pose', SchemaType.Protobuf],
        ],
      );
      assert.equal(new TextDecoder().decode(frames[5]!.data), 'message 5 '.repeat(8));
      assert.deepEqual(
        readFrames(reader, { urls: ['/pose'], beginUs: 100_000, endUs: 300_456 }).map((f) => f.timestamp),
        [100_456, 140_456, 180_456, 220_456, 260_456, 300_456],
      );
      assert.deepEqual(
        reader.schemas().map((s) => [s.name, s.schemaType]),
        [
          ['std_msgs/msg/String', SchemaType.Cdr],
          ['foxglove.Log', SchemaType.Raw],
          ['pb.Pose', SchemaType.Protobuf],
        ],
      );
      reader.close();
    });
  }

  test('unchunked foreign files read through their data section', async () => {
    const reader = await openBytes(await ros2File({ chunks: false }));
    assert.equal(readFrames(reader).length, 80);
    assert.deepEqual(
      readFrames(reader, { beginUs: 10_000, endUs: 30_456 }).map((f) => f.url),
      ['/log', '/pose', '/raw'],
    );
    reader.close();
  });

  test('a truncated foreign file is scanned without tryToFix', async () => {
    const bytes = await ros2File({ compression: 'zstd' });
    const reader = await openBytes(bytes.subarray(0, bytes.length - 200), false);
    const frames = readFrames(reader);
    assert.ok(frames.length > 40 && frames.length <= 80, `${frames.length} frames`);
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(reader.mcap.mode, 'recovered');
    reader.close();
  });
});
