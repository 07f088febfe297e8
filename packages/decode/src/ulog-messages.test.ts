import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { PayloadDecoder } from './index.js';

// The bodies as @vlink/bag-interop's ULog reader gives them (flight.ulg and the real PX4 logs check the same decoding
// against pyulog in backend-interop's ulog-reader.test.ts); here the layouts' edges.
const encoder = new TextEncoder();
const decoder = new PayloadDecoder({
  urls: ['logging', 'logging_tagged', 'dropout', 'parameter'].map((kind) => ({
    url: `ulog/${kind}`,
    encoding: 'ulog',
  })),
});
const decode = (kind: string, serType: string, data: Uint8Array) =>
  decoder.decode({ url: `ulog/${kind}`, serType, schemaType: SchemaType.Unknown, actionType: 0, data });

function logging(level: number, timestamp: bigint, message: string, tag?: number): Uint8Array {
  const at = tag === undefined ? 1 : 3;
  const text = encoder.encode(message);
  const body = new Uint8Array(at + 8 + text.length);
  const view = new DataView(body.buffer);
  view.setUint8(0, level);
  if (tag !== undefined) view.setUint16(1, tag, true);
  view.setBigUint64(at, timestamp, true);
  body.set(text, at + 8);
  return body;
}

function parameter(key: string, value: Uint8Array): Uint8Array {
  const k = encoder.encode(key);
  return new Uint8Array([k.length, ...k, ...value]);
}

describe('ULog messages that are not samples', () => {
  test('logging, tagged logging, dropouts: fields as pyulog names them, levels by name', () => {
    assert.deepEqual(decode('logging', 'ulog.logging', logging(0x36, 140_008n, '[commander] Takeoff')), {
      kind: 'ulog',
      value: { log_level: 0x36, level: 'INFO', timestamp: 140_008, message: '[commander] Takeoff' },
    });
    assert.deepEqual(decode('logging_tagged', 'ulog.loggingTagged', logging(0x30, 1n, 'x', 7)), {
      kind: 'ulog',
      value: { log_level: 0x30, level: 'EMERGENCY', tag: 7, timestamp: 1, message: 'x' },
    });
    const odd = decode('logging', 'ulog.logging', logging(9, 2n, ''));
    assert.deepEqual(odd.kind === 'ulog' && odd.value, { log_level: 9, level: 'UNKNOWN', timestamp: 2, message: '' });
    assert.deepEqual(decode('dropout', 'ulog.dropout', new Uint8Array([23, 1])), {
      kind: 'ulog',
      value: { duration: 279 },
    });
  });

  test('parameters in their declared type (scalars and char arrays)', () => {
    const float = new Uint8Array(new Float32Array([7.25]).buffer);
    const int = new Uint8Array(new Int32Array([-3]).buffer);
    assert.deepEqual(decode('parameter', 'ulog.parameter', parameter('float MC_PITCH_P', float)), {
      kind: 'ulog',
      value: { name: 'MC_PITCH_P', type: 'float', value: 7.25 },
    });
    const decoded = decode('parameter', 'ulog.parameter', parameter('int32_t SYS_AUTOSTART', int));
    assert.deepEqual(decoded.kind === 'ulog' && decoded.value, { name: 'SYS_AUTOSTART', type: 'int32_t', value: -3 });
    const chars = decode('parameter', 'ulog.parameter', parameter('char[4] NAME', encoder.encode('abcd')));
    assert.deepEqual(chars.kind === 'ulog' && chars.value, { name: 'NAME', type: 'char', value: 'abcd' });
  });

  test('bodies shorter than their layout, and keys that are not a type and a name, do not decode', () => {
    for (const [kind, serType, body, reason] of [
      ['logging', 'ulog.logging', new Uint8Array(5), /the body has 5 bytes; its layout needs 9/],
      ['logging_tagged', 'ulog.loggingTagged', new Uint8Array(10), /its layout needs 11/],
      ['dropout', 'ulog.dropout', new Uint8Array(1), /its layout needs 2/],
      ['parameter', 'ulog.parameter', new Uint8Array(0), /its layout needs 1/],
      ['parameter', 'ulog.parameter', new Uint8Array([9, 1]), /the key runs past the body/],
      ['parameter', 'ulog.parameter', parameter('float', new Uint8Array(4)), /"float" is not a ULog type and name/],
      ['parameter', 'ulog.parameter', parameter('pos P', new Uint8Array(4)), /"pos P" is not a ULog type and name/],
      [
        'parameter',
        'ulog.parameter',
        parameter('double P', new Uint8Array(4)),
        /Offset is outside|out of bounds|outside the bounds/i,
      ],
    ] as const) {
      const decoded = decode(kind, serType, body);
      assert.equal(decoded.kind, 'hex', `${serType} ${body.length}`);
      assert.equal(decoded.kind === 'hex' && decoded.error?.code, 'CORRUPT_DATA');
      assert.match((decoded as { reason: string }).reason, reason);
    }
    // Another ulog.* type stays what it was: no schema, no layout of its own.
    const other = decode('logging', 'ulog.other', new Uint8Array(4));
    assert.equal(other.kind === 'hex' && other.error?.code, 'NOT_FOUND');
  });
});
