import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, SchemaType } from '@vlink/bag-core/model';
import { decodeFrameAt, decodeFrames, FrameEncoder } from './binary-frame.js';

describe('binary frames', () => {
  test('binary frames round-trip, including negative and large timestamps and a partial buffer', () => {
    const encoder = new FrameEncoder();
    const frames = [
      {
        timestamp: 0,
        url: 'a',
        data: new Uint8Array(0),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      },
      {
        timestamp: 2 ** 40 + 7,
        url: 'shm://点云',
        data: new Uint8Array([1, 2, 3]),
        serType: 'pb.X',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientResponse,
      },
      {
        timestamp: -5,
        url: 'x',
        data: new Uint8Array([9]),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Get,
      },
    ];
    const parts = frames.map((f) => encoder.encode(f));
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) all.set(p, (at += p.length) - p.length);
    const back = decodeFrames(all);
    assert.deepEqual(
      back.map((f) => ({ ...f, data: [...f.data] })),
      frames.map((f) => ({ ...f, data: [...f.data] })),
    );
    assert.equal(decodeFrameAt(all.subarray(0, parts[0]!.length + 3), parts[0]!.length), undefined);
    assert.throws(() => decodeFrames(all.subarray(0, all.length - 1)), RangeError);
  });
});
