import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { actionText, formatVlinkDate } from '@vlink/bag-core';
import type { Frame, WriterConfig } from '@vlink/bag-core';
import { SAMPLE_PROTO_SCHEMA } from '@vlink/bag-core/testing';
import { headerCrc } from './header-crc.js';
import { VCAP_LIBRARY } from './vcap-format.js';
import {
  FB_SCHEMA,
  RPC_REQ,
  RPC_RESP,
  mcapIndexed,
  mcapStream,
  mixedFrames,
  recordToBytes,
  testContext,
} from './vcap.test.helper.js';

// Our output checked record by record with @mcap/core's readers (CRC validation on), against format reference §5.1–5.3.

const VARIANTS: Array<{
  name: string;
  config: Partial<WriterConfig>;
  compress: 'zstd' | 'None';
  chunked: boolean;
  bigEvery?: number;
}> = [
  { name: 'default chunks, no compression', config: {}, compress: 'None', chunked: true },
  { name: 'zstd chunks with CRC', config: { compress: 'zstd', enableChunkCrc: true }, compress: 'zstd', chunked: true },
  {
    name: 'auto = zstd, small chunks',
    config: { compress: 'auto', cacheSize: 1500, enableChunkCrc: true },
    compress: 'zstd',
    chunked: true,
  },
  { name: 'tiny uncompressed chunks, CRC off', config: { cacheSize: 300 }, compress: 'None', chunked: true },
  // Chunks under 1 KiB stay uncompressed (mcap's writer rule), although the header says zstd.
  {
    name: 'zstd with chunks too small to compress',
    config: { compress: 'zstd', cacheSize: 600 },
    compress: 'zstd',
    chunked: true,
  },
  {
    name: 'no chunking (cacheSize 0) forces no compression',
    config: { cacheSize: 0, compress: 'zstd' },
    compress: 'None',
    chunked: false,
  },
  {
    name: 'big payloads written around the chunk buffer, CRC on',
    config: { cacheSize: 512 * 1024, enableChunkCrc: true },
    compress: 'None',
    chunked: true,
    bigEvery: 7,
  },
  {
    name: 'big payloads, zstd level map (slowest)',
    config: { compress: 'zstd', compressLevel: 5 },
    compress: 'zstd',
    chunked: true,
    bigEvery: 13,
  },
];

const START = 1_773_712_800_123;
const ns = (f: Frame) => BigInt(f.timestamp) * 1000n + BigInt(START) * 1_000_000n;

for (const v of VARIANTS) {
  describe(`vcap records: ${v.name}`, () => {
    const frames = mixedFrames(90, v.bigEvery ?? 0);
    const context = testContext({ startTimestamp: START, processName: 'proc', tagName: 'drive-1', timezone: 480 });
    const bytesP = recordToBytes(frames, v.config, context, (w) => {
      w.setUrlLoss('dds://imu', 0.125);
      w.setUrlLoss('dds://blob', 3);
    });

    test('header, VLinkHeader first, VLinkChannel_* last, all CRCs valid (McapStreamReader)', async () => {
      const records = await mcapStream(await bytesP);
      assert.equal(records[0]!.type, 'Header');
      const header = records[0] as { profile: string; library: string };
      assert.equal(header.profile, 'vlink');
      assert.equal(header.library, VCAP_LIBRARY);
      const meta = records[1]!;
      assert.equal(meta.type, 'Metadata');
      assert.equal(meta.name, 'VLinkHeader');
      assert.deepEqual(
        [...meta.metadata],
        [
          ['tag', 'drive-1'],
          ['version', '2.1.0'],
          ['compress', v.compress],
          ['process', 'proc'],
          ['date', formatVlinkDate(START)],
          ['timezone', '480'],
          ['start_timestamp', String(START)],
          // vlink-bag's one key beyond VLink's (format reference §5.6).
          ['header_crc32', headerCrc(meta.metadata)],
        ],
      );
      const lastMessage = records.map((r) => r.type).lastIndexOf('Message');
      const channelMetas = records.filter((r) => r.type === 'Metadata' && r.name.startsWith('VLinkChannel_'));
      const dataEnd = records.findIndex((r) => r.type === 'DataEnd');
      const channelCount = records.slice(0, dataEnd).filter((r) => r.type === 'Channel').length;
      assert.equal(channelMetas.length, channelCount);
      assert.ok(records.indexOf(channelMetas[0]!) > lastMessage, 'VLinkChannel_* come after every message');
      assert.deepEqual(
        channelMetas.map((m) => m.type === 'Metadata' && m.name),
        Array.from({ length: channelCount }, (_, i) => `VLinkChannel_${i + 1}`),
      );
      assert.equal(records.at(-1)!.type, 'Footer');
      assert.equal(records.filter((r) => r.type === 'Chunk').length > 0, v.chunked);
      if (v.compress === 'None') assert.ok(records.every((r) => r.type !== 'Chunk' || r.compression === ''));
      const sizes = records.flatMap((r) =>
        r.type === 'Chunk' ? [[r.compression, Number(r.uncompressedSize)] as const] : [],
      );
      for (const [compression, size] of sizes)
        if (size < 1024) assert.equal(compression, '', 'chunks under 1 KiB are stored uncompressed');
      if (v.compress === 'zstd' && sizes.some(([, size]) => size >= 4096)) assert.ok(sizes.some(([c]) => c === 'zstd'));
      // Messages in the stream: file order is write order, sequences count per channel from 1.
      const messages = records.filter((r) => r.type === 'Message');
      assert.equal(messages.length, frames.length);
      const seq = new Map<number, number>();
      messages.forEach((m, i) => {
        if (m.type !== 'Message') return;
        const next = (seq.get(m.channelId) ?? 0) + 1;
        seq.set(m.channelId, next);
        assert.equal(m.sequence, next);
        assert.equal(m.logTime, ns(frames[i]!));
        assert.equal(m.publishTime, m.logTime);
        assert.deepEqual(new Uint8Array(m.data), frames[i]!.data);
      });
      // Schema and channel records precede their first use.
      const firstUse = (id: number) => records.findIndex((r) => r.type === 'Message' && r.channelId === id);
      for (const r of records.slice(0, dataEnd))
        if (r.type === 'Channel') assert.ok(records.indexOf(r) < firstUse(r.id));
    });

    test('summary: channels, schemas, statistics, metadata (McapIndexedReader)', async () => {
      const bytes = await bytesP;
      const reader = await mcapIndexed(bytes);
      const channels = [...reader.channelsById.values()].map((c) => ({
        id: c.id,
        topic: c.topic,
        messageEncoding: c.messageEncoding,
        schema: c.schemaId === 0 ? '' : reader.schemasById.get(c.schemaId)!.name,
        metadata: Object.fromEntries(c.metadata),
      }));
      const firstSeen: string[] = [];
      for (const f of frames)
        if (!firstSeen.includes(`${f.url} ${actionText(f.actionType)}`))
          firstSeen.push(`${f.url} ${actionText(f.actionType)}`);
      const channelExtras: Record<string, Record<string, string>> = {
        'dds://camera': { ser: 'pb.Image', encoding: 'protobuf' },
        'dds://pose': { ser: 'fb.Pose', encoding: 'flatbuffers' },
        'dds://imu': { ser: 'json', encoding: 'raw' },
        'dds://svc': { ser: 'pb.Req|pb.Resp', encoding: 'protobuf' },
        'dds://param': { ser: 'raw', encoding: 'raw' },
        'dds://blob': {},
      };
      const encodingOf: Record<string, [string, string]> = {
        // MCAP's well-known names (format reference §5.2): `flatbuffer`, `json` for a JSON ser, a declared encoding
        // for RPC and opaque channels (the registry makes message_encoding mandatory).
        'dds://camera': ['protobuf', 'pb.Image'],
        'dds://pose': ['flatbuffer', 'fb.Pose'],
        'dds://imu': ['json', ''],
        'dds://svc': ['protobuf', 'the RPC half'],
        'dds://param': ['raw', ''],
        'dds://blob': ['unknown', ''],
      };
      assert.deepEqual(
        channels,
        firstSeen.map((key, i) => {
          const [topic, action] = key.split(' ') as [string, string];
          return {
            id: i + 1,
            topic,
            messageEncoding: encodingOf[topic]![0],
            // Each RPC channel holds one half of `Req|Resp` and references that half's schema (vlink-bag, §5.2).
            schema: topic === 'dds://svc' ? (action.endsWith('Req') ? 'pb.Req' : 'pb.Resp') : encodingOf[topic]![1],
            // vlink-bag adds the ser and family label to VLink's {action} (kept when VLinkChannel_* are lost).
            metadata: { action, ...channelExtras[topic]! },
          };
        }),
      );
      const idOf = (topic: string, action: string) =>
        channels.find((c) => c.topic === topic && c.metadata['action'] === action)!.id;
      const dataOf: Record<string, Uint8Array> = {
        'pb.Image': SAMPLE_PROTO_SCHEMA.data,
        'fb.Pose': FB_SCHEMA.data,
        'pb.Req': RPC_REQ.data,
        'pb.Resp': RPC_RESP.data,
      };
      const schemas = [...reader.schemasById.values()].map((s) => [
        s.id,
        s.name,
        s.encoding,
        Buffer.from(s.data).equals(Buffer.from(dataOf[s.name]!)),
      ]);
      const firstSvc = frames.find((f) => f.url === 'dds://svc')!;
      const rpc = actionText(firstSvc.actionType).endsWith('Req') ? ['pb.Req', 'pb.Resp'] : ['pb.Resp', 'pb.Req'];
      // Schema records are lazy (written with their first channel): camera, pose, then the RPC halves in use order.
      assert.deepEqual(schemas, [
        [1, 'pb.Image', 'protobuf', true],
        [2, 'fb.Pose', 'flatbuffer', true],
        [3, rpc[0], 'protobuf', true],
        [4, rpc[1], 'protobuf', true],
      ]);
      const st = reader.statistics!;
      assert.equal(st.messageCount, BigInt(frames.length));
      assert.equal(st.schemaCount, 4);
      assert.equal(st.channelCount, reader.channelsById.size);
      assert.equal(st.metadataCount, 1 + reader.channelsById.size);
      assert.equal(st.attachmentCount, 0);
      assert.equal(st.messageStartTime, ns(frames[0]!));
      assert.equal(st.messageEndTime, ns(frames.at(-1)!));
      assert.equal(st.chunkCount, reader.chunkIndexes.length);
      assert.equal(st.chunkCount > 0, v.chunked);
      if (v.config.cacheSize !== undefined && v.config.cacheSize > 0 && v.config.cacheSize < 2000)
        assert.ok(st.chunkCount > 5, `${st.chunkCount} chunks`);
      let total = 0n;
      for (const n of st.channelMessageCounts.values()) total += n;
      assert.equal(total, BigInt(frames.length));
      assert.deepEqual(
        reader.metadataIndexes.map((m) => m.name),
        ['VLinkHeader', ...channels.map((c) => `VLinkChannel_${c.id}`)],
      );

      // VLinkChannel_* values.
      const metas = new Map<string, Map<string, string>>();
      for await (const m of reader.readMetadata()) metas.set(m.name, m.metadata);
      const imu = metas.get(`VLinkChannel_${idOf('dds://imu', 'Pub')}`)!;
      const imuFrames = frames.filter((f) => f.url === 'dds://imu');
      const span = (imuFrames.at(-1)!.timestamp - imuFrames[0]!.timestamp) / 1e6;
      assert.deepEqual(
        [...imu],
        [
          ['index', String(idOf('dds://imu', 'Pub') - 1)],
          ['type', 'Event'],
          ['action', 'Pub'],
          ['encoding', 'raw'],
          ['ser', 'json'],
          ['count', String(imuFrames.length)],
          ['size', String(imuFrames.reduce((s, f) => s + f.data.length, 0))],
          ['loss', '0.125000'],
          ['freq', (imuFrames.length / span).toFixed(6)],
        ],
      );
      const svc = metas.get(`VLinkChannel_${idOf('dds://svc', 'C/Resp')}`)!;
      assert.equal(svc.get('type'), 'Method');
      assert.equal(svc.get('ser'), 'pb.Req|pb.Resp');
      assert.equal(svc.get('encoding'), 'protobuf');
      assert.equal(svc.get('freq'), '0.000000');
      assert.equal(metas.get(`VLinkChannel_${idOf('dds://blob', 'Pub')}`)!.get('loss'), '-1.000000');
      assert.equal(metas.get(`VLinkChannel_${idOf('dds://blob', 'Pub')}`)!.get('encoding'), '');
      assert.equal(metas.get(`VLinkChannel_${idOf('dds://camera', 'Pub')}`)!.get('loss'), '0.000000');

      // Indexed reads through the message indexes (log-time order, topic filter) see the same messages.
      // (@mcap/core's indexed reader only reads chunks: an unchunked file has nothing for it.)
      if (!v.chunked) return;
      const all: bigint[] = [];
      for await (const m of reader.readMessages()) all.push(m.logTime);
      assert.deepEqual(all, frames.map(ns));
      const camera: number[] = [];
      for await (const m of reader.readMessages({ topics: ['dds://camera'] })) camera.push(m.sequence);
      assert.deepEqual(
        camera,
        frames.filter((f) => f.url === 'dds://camera').map((_, i) => i + 1),
      );
    });
  });
}
