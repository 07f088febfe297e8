import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, SchemaType } from '@vlink/bag';
import { fromBase64, fromBase64Url, toBase64Url } from './base64.js';
import { decodeFrameAt, decodeFrames, FrameEncoder } from './binary-frame.js';
import { decodeCursor, encodeCursor } from './cursor-token.js';

describe('codecs', () => {
  test('base64 decoding and the url-safe variant invert the encoding', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      const want = btoa(String.fromCharCode(...bytes));
      assert.deepEqual(fromBase64(want), bytes);
      assert.deepEqual(fromBase64Url(toBase64Url(bytes)), bytes);
    }
  });

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

  test('cursor tokens carry the query and position and reject tampering', () => {
    const token = encodeCursor('a.vdb', { urls: ['x'], beginUs: 5, endUs: 9 }, { t: 7, k: 2, n: 11 });
    assert.match(token, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(token, 'a.vdb'), {
      query: { urls: ['x'], beginUs: 5, endUs: 9 },
      position: { t: 7, k: 2, n: 11 },
    });
    assert.throws(() => decodeCursor(token, 'b.vdb'), /another bag/);
    assert.throws(() => decodeCursor(`${token.slice(0, -3)}!!!`, 'a.vdb'), /cursor/);
    const forged = toBase64Url(
      new TextEncoder().encode(JSON.stringify({ v: 1, id: 'a.vdb', q: {}, p: { t: -1, k: 0, n: 0 } })),
    );
    assert.throws(() => decodeCursor(forged, 'a.vdb'), /malformed/);
  });
});
