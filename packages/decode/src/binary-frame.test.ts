import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core/errors';
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

  test('a url or ser type longer than the u16 length is refused (LIMIT_REACHED), never cut to another name', () => {
    const encoder = new FrameEncoder();
    const frame = (url: string, serType = 'raw') => ({
      timestamp: 1,
      url,
      serType,
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      data: new Uint8Array(1),
    });
    const longest = `/${'u'.repeat(0xffff - 1)}`;
    assert.equal(decodeFrames(encoder.encode(frame(longest)))[0]!.url, longest);
    for (const [url, ser] of [
      [`${longest}x`, 'raw'],
      ['/a', 'é'.repeat(0x8000)],
    ] as const)
      assert.throws(
        () => encoder.encode(frame(url, ser)),
        (e: unknown) => BagError.isInstance(e) && e.code === 'LIMIT_REACHED' && /65535/.test(e.message),
      );
  });
});
