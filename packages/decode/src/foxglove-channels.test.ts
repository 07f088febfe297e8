import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { foxgloveChannels } from './foxglove-channels.js';

const bytes = (...values: number[]) => new Uint8Array(values);
const utf8 = (text: string) => new TextEncoder().encode(text);

describe('foxgloveChannels', () => {
  test('well-known encodings; binary schemas base64, text schemas as text; old names read like new ones', () => {
    const urls = [
      { url: '/pb', ser: 'a.Pose', schemaType: SchemaType.Protobuf },
      { url: '/pb', ser: 'a.Pose', schemaType: SchemaType.Protobuf }, // a second action of the same url
      { url: '/rpc', ser: 'a.Req|a.Resp', schemaType: SchemaType.Protobuf, encoding: '' },
      { url: '/fb-old', ser: 'b.Table', schemaType: SchemaType.Flatbuffers, encoding: 'flatbuffers' },
      { url: '/fb-new', ser: 'b.Table', schemaType: SchemaType.Flatbuffers, encoding: 'flatbuffer' },
      { url: '/cdr', ser: 'std_msgs/msg/String', schemaType: SchemaType.Cdr },
      { url: '/idl', ser: 'pkg::msg::T', schemaType: SchemaType.Cdr, encoding: 'cdr' },
      { url: '/ros1', ser: 'std_msgs/String', schemaType: SchemaType.Unknown, encoding: 'ros1' },
      { url: '/raw', ser: 'json', schemaType: SchemaType.Raw },
      { url: '/status', ser: 'c.Status', schemaType: SchemaType.Raw, encoding: 'json' },
      { url: '/ulog', ser: 'esc', schemaType: SchemaType.Unknown, encoding: 'ulog' },
      { url: '/octets', ser: '', schemaType: SchemaType.Unknown, encoding: 'application/octet-stream' },
      { url: '/zc', ser: 'vlink::zerocopy::X', schemaType: SchemaType.ZeroCopy },
      { url: '/missing', ser: 'a.Absent', schemaType: SchemaType.Protobuf },
    ];
    const schemas = [
      { name: 'a.Pose', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: bytes(1, 2, 3) },
      { name: 'a.Req', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: bytes(4) },
      { name: 'b.Table', encoding: 'flatbuffers', schemaType: SchemaType.Flatbuffers, data: bytes(5, 6) },
      { name: 'std_msgs/msg/String', encoding: 'ros2msg', schemaType: SchemaType.Cdr, data: utf8('string data') },
      { name: 'pkg::msg::T', encoding: 'ros2idl', schemaType: SchemaType.Cdr, data: utf8('module pkg {};') },
      { name: 'std_msgs/String', encoding: 'ros1msg', schemaType: SchemaType.Unknown, data: utf8('string data') },
      { name: 'c.Status', encoding: 'jsonschema', schemaType: SchemaType.Raw, data: utf8('{"type":"object"}') },
      { name: 'esc', encoding: 'ulog', schemaType: SchemaType.Unknown, data: utf8('esc:uint64_t timestamp;') },
    ];
    assert.deepEqual(foxgloveChannels(urls, schemas), [
      { topic: '/pb', encoding: 'protobuf', schemaName: 'a.Pose', schema: 'AQID', schemaEncoding: 'protobuf' },
      { topic: '/rpc', encoding: 'protobuf', schemaName: 'a.Req', schema: 'BA==', schemaEncoding: 'protobuf' },
      { topic: '/fb-old', encoding: 'flatbuffer', schemaName: 'b.Table', schema: 'BQY=', schemaEncoding: 'flatbuffer' },
      { topic: '/fb-new', encoding: 'flatbuffer', schemaName: 'b.Table', schema: 'BQY=', schemaEncoding: 'flatbuffer' },
      {
        topic: '/cdr',
        encoding: 'cdr',
        schemaName: 'std_msgs/msg/String',
        schema: 'string data',
        schemaEncoding: 'ros2msg',
      },
      {
        topic: '/idl',
        encoding: 'cdr',
        schemaName: 'pkg::msg::T',
        schema: 'module pkg {};',
        schemaEncoding: 'ros2idl',
      },
      {
        topic: '/ros1',
        encoding: 'ros1',
        schemaName: 'std_msgs/String',
        schema: 'string data',
        schemaEncoding: 'ros1msg',
      },
      { topic: '/raw', encoding: 'json', schemaName: 'json', schema: '' },
      {
        topic: '/status',
        encoding: 'json',
        schemaName: 'c.Status',
        schema: '{"type":"object"}',
        schemaEncoding: 'jsonschema',
      },
      {
        topic: '/ulog',
        encoding: 'ulog',
        schemaName: 'esc',
        schema: 'esc:uint64_t timestamp;',
        schemaEncoding: 'ulog',
      },
      { topic: '/octets', encoding: 'application/octet-stream', schemaName: '', schema: '' },
      { topic: '/zc', encoding: 'unknown', schemaName: 'vlink::zerocopy::X', schema: '' },
      { topic: '/missing', encoding: 'protobuf', schemaName: 'a.Absent', schema: '' },
    ]);
  });
});
