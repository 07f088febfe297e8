import assert from 'node:assert/strict';
import { ActionType, BagError, resolveWriterConfig, SchemaType, type Frame, type WriterConfig } from '@vlink/bag-core';
import { createTestContext, patternBytes } from '@vlink/bag-core/testing';
import { describe, test } from '@vlink/fixtures/test';
import { loadCodecs } from '../codecs.js';
import { messageEncodingFor, wellKnownSchemaEncoding } from '../encodings/well-known.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { headerCrc } from '../vcap/header-crc.js';
import { mcapStream } from '../vcap/vcap.test.helper.js';
import { PlainMcapWriter } from './plain-mcap-writer.js';

const START_MS = 1_773_712_800_123;
const START_NS = BigInt(START_MS) * 1_000_000n;
const ROS1 = {
  name: 'std_msgs/String',
  encoding: 'ros1msg',
  schemaType: SchemaType.Unknown,
  data: patternBytes(30, 1),
};
const REQ = { name: 'pb.Req', encoding: 'proto', schemaType: SchemaType.Protobuf, data: patternBytes(20, 2) };
const FBS = { name: 'fb.T', encoding: 'fbs', schemaType: SchemaType.Flatbuffers, data: patternBytes(10, 3) };

function frame(init: Partial<Frame> & Pick<Frame, 'url' | 'timestamp'>): Frame {
  return {
    data: patternBytes(8, init.timestamp),
    serType: '',
    schemaType: SchemaType.Unknown,
    actionType: ActionType.Publish,
    ...init,
  };
}

async function write(frames: Frame[], config: Partial<WriterConfig>, during?: (w: PlainMcapWriter) => void) {
  const writable = new MemoryWritable();
  const writer = new PlainMcapWriter({
    writable,
    codecs: await loadCodecs(),
    config: resolveWriterConfig(config),
    context: createTestContext({ startTimestamp: START_MS, tagName: 'run-1', schemas: [ROS1, REQ] }),
    file: 'mem.mcap',
  });
  for (const f of frames) writer.write(f);
  during?.(writer);
  writer.close();
  writer.close(); // idempotent
  assert.throws(
    () => writer.write(frames[0]!),
    (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
  );
  return writable.bytes();
}

describe('PlainMcapWriter', () => {
  test('encodings, schemas, publish times, sequences, actions, carried records and attachments', async () => {
    const frames = [
      frame({ url: '/chatter', timestamp: 10, serType: 'std_msgs/String', publishTime: 5, sequence: 7 }),
      // A zero ROS header stamp: ~1.7e18 ns before the start, written as an absolute time (0 here: before 1970).
      frame({ url: '/chatter', timestamp: 20, serType: 'std_msgs/String', publishTime: -START_MS * 1000 - 1 }),
      frame({
        url: '/far',
        timestamp: 30,
        serType: 'json',
        schemaType: SchemaType.Raw,
        publishTime: -START_MS * 1000 + 1,
      }),
      frame({
        url: 'svc',
        timestamp: 40,
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientRequest,
      }),
      frame({ url: '/log', timestamp: 50, serType: 'ulog.logging' }),
      frame({ url: '/raw', timestamp: 60, serType: 'text', schemaType: SchemaType.Raw }),
    ];
    const bytes = await write(
      frames,
      {
        carry: {
          metadata: [
            { name: 'mcap.header', values: { profile: 'ros1', library: 'x' } },
            { name: 'mcap.channel./chatter', values: { callerid: '/talker' } },
            { name: 'robot', values: { name: 'rover-7' } },
            { name: 'VLinkHeader', values: { tag: 'stale' } },
          ],
          attachments: [
            {
              name: 'cal.yaml',
              mediaType: 'text/yaml',
              logTime: '1700000000000000001',
              createTime: '5',
              data: patternBytes(33, 4),
            },
          ],
          urlEncodings: { '/log': 'ulog' },
        },
      },
      (w) => {
        w.writeSchema(FBS);
        w.setUrlLoss();
        w.commit();
        w.tick(Date.now() + 10_000);
        w.setCounters({ '/chatter': { queueDepth: 2 }, '/none': {} });
      },
    );
    const records = await mcapStream(bytes); // every CRC checked
    const header = records.find((r) => r.type === 'Header');
    assert.deepEqual(header?.type === 'Header' && [header.profile, header.library], ['ros1', 'vlink-bag 0.1.0']);
    const data = records.slice(
      0,
      records.findIndex((r) => r.type === 'DataEnd'),
    );
    const schemas = new Map<number, [string, string]>();
    const channels = new Map<number, [string, string, string, Record<string, string>]>();
    for (const r of data) {
      if (r.type === 'Schema') schemas.set(r.id, [r.name, r.encoding]);
      if (r.type === 'Channel')
        channels.set(r.id, [
          r.topic,
          r.messageEncoding,
          schemas.get(r.schemaId)?.[0] ?? '',
          Object.fromEntries(r.metadata),
        ]);
    }
    assert.deepEqual([...schemas.values()].sort(), [
      ['fb.T', 'flatbuffer'],
      ['pb.Req', 'protobuf'],
      ['std_msgs/String', 'ros1msg'],
    ]);
    assert.deepEqual(
      [...channels.values()],
      [
        ['/chatter', 'ros1', 'std_msgs/String', { callerid: '/talker' }],
        ['/far', 'json', '', { 'vlink.ser': 'json' }],
        ['svc', 'protobuf', 'pb.Req', { 'vlink.action': 'C/Req', 'vlink.ser': 'pb.Req|pb.Resp' }],
        ['/log', 'ulog', '', { 'vlink.ser': 'ulog.logging' }],
        ['/raw', 'text', '', { 'vlink.ser': 'text' }],
      ],
    );
    const messages = data.flatMap((r) =>
      r.type === 'Message' ? [[r.channelId, r.sequence, r.logTime, r.publishTime]] : [],
    );
    const ns = (us: number) => START_NS + BigInt(us) * 1000n;
    assert.deepEqual(messages, [
      [1, 7, ns(10), ns(5)],
      [1, 2, ns(20), 0n],
      [2, 1, ns(30), 1000n],
      [3, 1, ns(40), ns(40)],
      [4, 1, ns(50), ns(50)],
      [5, 1, ns(60), ns(60)],
    ]);
    const metadata = data.flatMap((r) => (r.type === 'Metadata' ? [[r.name, Object.fromEntries(r.metadata)]] : []));
    assert.deepEqual(
      metadata.map(([name]) => name),
      ['VLinkHeader', 'robot', 'VLinkBagCounters'],
    );
    assert.deepEqual(metadata[0]![1], {
      tag: 'run-1',
      version: '2.1.0',
      compress: 'None',
      process: 'vlink-test',
      date: (metadata[0]![1] as Record<string, string>)['date'],
      timezone: '480',
      start_timestamp: String(START_MS),
      header_crc32: headerCrc(Object.entries(metadata[0]![1] as Record<string, string>)),
    });
    assert.deepEqual(metadata[2]![1], { '/chatter': '{"queueDepth":2}' });
    const attachment = data.find((r) => r.type === 'Attachment');
    assert.ok(attachment?.type === 'Attachment');
    assert.deepEqual(
      [attachment.name, attachment.mediaType, attachment.logTime, attachment.createTime, [...attachment.data]],
      ['cal.yaml', 'text/yaml', 1700000000000000001n, 5n, [...patternBytes(33, 4)]],
    );
    const stats = records.find((r) => r.type === 'Statistics');
    assert.equal(stats?.type === 'Statistics' && stats.attachmentCount, 1);
    assert.equal(records.filter((r) => r.type === 'AttachmentIndex').length, 1);
  });

  test('bad timestamps are refused; zstd chunks follow the config', async () => {
    const bytes = await write([frame({ url: 'a', timestamp: 1 })], { compress: 'zstd' }, (w) => {
      assert.throws(
        () => w.write(frame({ url: 'a', timestamp: -1 })),
        (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
      );
    });
    const chunk = (await mcapStream(bytes)).find((r) => r.type === 'ChunkIndex');
    assert.ok(chunk?.type === 'ChunkIndex');
    assert.ok(['zstd', ''].includes(chunk.compression));
  });

  test('well-known names: message encoding per family and ser, schema spellings', () => {
    assert.equal(messageEncodingFor(SchemaType.Flatbuffers, 'x'), 'flatbuffer');
    assert.equal(messageEncodingFor(SchemaType.Cdr, 'x'), 'cdr');
    assert.equal(messageEncodingFor(SchemaType.ZeroCopy, 'x'), 'zerocopy');
    assert.equal(messageEncodingFor(SchemaType.Raw, 'application/json'), 'json');
    assert.equal(messageEncodingFor(SchemaType.Raw, 'blob'), 'raw');
    assert.equal(messageEncodingFor(SchemaType.Unknown, 'std::string'), 'text');
    assert.equal(messageEncodingFor(SchemaType.Unknown, 'json'), 'json');
    assert.equal(messageEncodingFor(SchemaType.Unknown, ''), 'unknown');
    assert.equal(messageEncodingFor(SchemaType.Raw, ' JSON '), 'json', 'ser trimmed, any case');
    assert.equal(messageEncodingFor(SchemaType.ZeroCopy, 'json'), 'zerocopy');
    assert.equal(messageEncodingFor(SchemaType.Unknown, 'x', 'ros2idl'), 'cdr');
    assert.equal(messageEncodingFor(SchemaType.Raw, 'x', 'jsonschema'), 'json');
    assert.equal(wellKnownSchemaEncoding(' BFBS '), 'flatbuffer');
    assert.equal(wellKnownSchemaEncoding('custom'), 'custom');
  });
});
