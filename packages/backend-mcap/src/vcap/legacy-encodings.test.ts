import assert from 'node:assert/strict';
import { ActionType, SchemaType } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { describe, test } from '@vlink/fixtures/test';
import { loadCodecs } from '../codecs.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { McapWriter } from '../mcap/mcap-writer.js';
import { mcapStream, openBytes, readFrames } from './vcap.test.helper.js';

const START_MS = 1_700_000_000_000;

/**
 * A `.vcap` exactly as VLink (and vlink-bag before the well-known names) wrote it: schema and message encoding
 * `flatbuffers` (plural), `raw` for a JSON ser, an empty message encoding with schema 0 for RPC channels and for a
 * url of unknown family, VLink's channel metadata `{action}` only, and the `VLinkHeader`/`VLinkChannel_*` records.
 */
async function legacyFile(): Promise<{ bytes: Uint8Array; rows: Array<[number, number, Uint8Array]> }> {
  const writable = new MemoryWritable();
  const mcap = new McapWriter({
    writable,
    codecs: await loadCodecs(),
    profile: 'vlink',
    library: 'libmcap 2.1.3',
    chunkSize: 4096,
    compression: 'zstd',
    compressionLevel: 1,
    chunkCrc: false,
    timeBase: BigInt(START_MS) * 1_000_000n,
  });
  mcap.start();
  mcap.addMetadata('VLinkHeader', [
    ['tag', 'legacy'],
    ['version', '2.1.0'],
    ['compress', 'zstd'],
    ['process', 'vlink_recorder'],
    ['date', '2023/11/14 22:13:20:000'],
    ['timezone', '480'],
    ['start_timestamp', String(START_MS)],
  ]);
  const fb = mcap.addSchema('fb.Pose', 'flatbuffers', patternBytes(40, 5));
  const pose = mcap.addChannel('dds://pose', 'flatbuffers', fb, new Map([['action', 'Pub']]));
  const imu = mcap.addChannel('dds://imu', 'raw', 0, new Map([['action', 'Pub']]));
  const req = mcap.addChannel('dds://svc', '', 0, new Map([['action', 'C/Req']]));
  const blob = mcap.addChannel('dds://blob', '', 0, new Map([['action', 'Pub']]));
  const rows: Array<[number, number, Uint8Array]> = [
    [pose, 1_000, patternBytes(32, 1)],
    [imu, 2_000, new TextEncoder().encode('{"a":1}')],
    [req, 3_000, patternBytes(16, 3)],
    [blob, 4_000, patternBytes(12, 4)],
    [pose, 5_000, patternBytes(32, 5)],
  ];
  const counts = new Map<number, number>();
  for (const [ch, us, data] of rows) {
    counts.set(ch, (counts.get(ch) ?? 0) + 1);
    mcap.addMessage(ch, counts.get(ch)!, us * 1000, data);
  }
  const channels: Array<[number, string, string, string, string]> = [
    [pose, 'Event', 'Pub', 'flatbuffers', 'fb.Pose'],
    [imu, 'Event', 'Pub', 'raw', 'json'],
    [req, 'Method', 'C/Req', 'protobuf', 'pb.Req|pb.Resp'],
    [blob, 'Event', 'Pub', '', ''],
  ];
  for (const [id, type, action, encoding, ser] of channels) {
    mcap.addMetadata(`VLinkChannel_${id}`, [
      ['index', String(id - 1)],
      ['type', type],
      ['action', action],
      ['encoding', encoding],
      ['ser', ser],
      ['count', String(counts.get(id))],
      ['size', String(rows.filter((r) => r[0] === id).reduce((n, r) => n + r[2].length, 0))],
      ['loss', '0.000000'],
      ['freq', '0.000000'],
    ]);
  }
  mcap.end();
  return { bytes: writable.bytes(), rows };
}

describe('.vcap written with the old encoding names', () => {
  test('is a valid MCAP file holding the old names, and reads with the same urls, families and payloads', async () => {
    const { bytes, rows } = await legacyFile();
    // The old names really are in the file (the official reader, CRCs checked).
    const records = await mcapStream(bytes);
    const data = records.slice(
      0,
      records.findIndex((r) => r.type === 'DataEnd'),
    );
    const encodings = data.filter((r) => r.type === 'Channel').map((r) => [r.topic, r.messageEncoding, r.schemaId]);
    assert.deepEqual(encodings, [
      ['dds://pose', 'flatbuffers', 1],
      ['dds://imu', 'raw', 0],
      ['dds://svc', '', 0],
      ['dds://blob', '', 0],
    ]);
    const schemaRecord = data.find((r) => r.type === 'Schema');
    assert.equal(schemaRecord?.type === 'Schema' ? schemaRecord.encoding : '', 'flatbuffers');

    const reader = await openBytes(bytes);
    const info = reader.info();
    assert.equal(info.tagName, 'legacy');
    assert.equal(info.processName, 'vlink_recorder');
    assert.equal(info.timezone, 480);
    assert.deepEqual(
      info.urls.map((u) => [u.url, u.action, u.type, u.ser, u.schemaType, u.count]),
      [
        ['dds://pose', 'Pub', 'Event', 'fb.Pose', SchemaType.Flatbuffers, 2],
        ['dds://imu', 'Pub', 'Event', 'json', SchemaType.Raw, 1],
        ['dds://svc', 'C/Req', 'Method', 'pb.Req|pb.Resp', SchemaType.Protobuf, 1],
        ['dds://blob', 'Pub', 'Event', '', SchemaType.Unknown, 1],
      ],
    );
    assert.deepEqual(
      reader.schemas().map((s) => [s.name, s.encoding, s.schemaType]),
      [['fb.Pose', 'flatbuffers', SchemaType.Flatbuffers]],
    );
    const frames = readFrames(reader);
    const urls = ['', 'dds://pose', 'dds://imu', 'dds://svc', 'dds://blob'];
    assert.deepEqual(
      frames.map((f) => [f.url, f.timestamp, f.actionType, Buffer.from(f.data).toString('hex')]),
      rows.map(([ch, us, data]) => [
        urls[ch],
        us,
        ch === 3 ? ActionType.ClientRequest : ActionType.Publish,
        Buffer.from(data).toString('hex'),
      ]),
    );
    reader.close();
  });
});
