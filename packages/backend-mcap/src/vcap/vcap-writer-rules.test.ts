import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, SchemaType } from '@vlink/bag-core';
import type { Frame } from '@vlink/bag-core';
import { patternBytes, writeFrame } from '@vlink/bag-core/testing';
import { MAX_LOG_OFFSET_US } from '../mcap/message-times.js';
import { openBytes, readFrames, recordToBytes, testContext } from './vcap.test.helper.js';

// The rules the .vcap writer follows (what it stores for urls, actions, times and schemas), read back; split from
// vcap-reader.test.ts, which covers round trips and metadata recovery.

describe('vcap writer rules', () => {
  const raw = (timestamp: number, over: Partial<Frame> = {}): Frame => ({
    timestamp,
    url: 'dds://a',
    data: patternBytes(8, timestamp),
    serType: 'json',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
    ...over,
  });

  test('a family change on a channel is a SCHEMA_CONFLICT and the frame is not stored', async () => {
    const bytes = await recordToBytes([], {}, testContext(), (w) => {
      writeFrame(w, raw(1));
      assert.throws(
        () => writeFrame(w, raw(2, { schemaType: SchemaType.Protobuf })),
        (e: unknown) => BagError.isInstance(e) && e.code === 'SCHEMA_CONFLICT' && e.url === 'dds://a',
      );
      assert.throws(
        () => writeFrame(w, raw(3, { serType: 'xml' })),
        (e: unknown) => BagError.isInstance(e) && e.code === 'SCHEMA_CONFLICT',
      );
      writeFrame(w, raw(4, { serType: '' })); // an empty ser never conflicts
      writeFrame(
        w,
        raw(5, { actionType: ActionType.Subscribe, serType: 'other.Type', schemaType: SchemaType.Protobuf }),
      ); // another channel
    });
    const reader = await openBytes(bytes);
    assert.deepEqual(
      readFrames(reader).map((f) => f.timestamp),
      [1, 4, 5],
    );
    // Two channels of one url disagree on ser and family: the url-level values become unknown (format reference §5.4 step 8).
    assert.deepEqual(
      readFrames(reader).map((f) => [f.serType, f.schemaType]),
      [
        ['', SchemaType.Unknown],
        ['', SchemaType.Unknown],
        ['', SchemaType.Unknown],
      ],
    );
    reader.close();
  });

  test('"Bytes" and an empty ser yield to a specific ser of the same url', async () => {
    const bytes = await recordToBytes([
      raw(1, { serType: 'Bytes', schemaType: SchemaType.Unknown }),
      raw(2, { serType: 'pb.Image', schemaType: SchemaType.Protobuf, actionType: ActionType.Subscribe }),
      raw(3, { serType: '', schemaType: SchemaType.Unknown, actionType: ActionType.Set }),
    ]);
    const reader = await openBytes(bytes);
    assert.deepEqual(
      new Set(readFrames(reader).map((f) => `${f.serType}/${f.schemaType}`)),
      new Set([`pb.Image/${SchemaType.Protobuf}`]),
    );
    reader.close();
  });

  test('a ser that arrives after the first frame updates VLinkChannel_* and embeds its schema', async () => {
    const bytes = await recordToBytes([
      raw(1, { serType: '', schemaType: SchemaType.Unknown }),
      raw(2, { serType: 'pb.Image', schemaType: SchemaType.Protobuf }),
    ]);
    const reader = await openBytes(bytes);
    assert.deepEqual(
      reader.info().urls.map((u) => [u.ser, u.schemaType]),
      [['pb.Image', SchemaType.Protobuf]],
    );
    assert.deepEqual(
      reader.schemas().map((s) => s.name),
      ['pb.Image'],
    );
    reader.close();
  });

  test('writeSchema embeds decodable schemas now, once, under the well-known encoding name; ignores others', async () => {
    const bytes = await recordToBytes([], {}, testContext(), (w) => {
      const proto = {
        name: 'pb.Pushed',
        encoding: 'protobuf',
        schemaType: SchemaType.Protobuf,
        data: patternBytes(9, 1),
      };
      w.writeSchema(proto);
      w.writeSchema(proto);
      w.writeSchema({ name: 'fbs.T', encoding: 'fbs', schemaType: SchemaType.Unknown, data: patternBytes(5, 2) });
      w.writeSchema({ name: 'j', encoding: 'json', schemaType: SchemaType.Raw, data: patternBytes(5, 3) });
      w.writeSchema({ name: 'empty', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: new Uint8Array(0) });
    });
    const reader = await openBytes(bytes);
    assert.deepEqual(
      reader.schemas().map((s) => [s.name, s.encoding, s.schemaType]),
      [
        ['pb.Pushed', 'protobuf', SchemaType.Protobuf],
        ['fbs.T', 'flatbuffer', SchemaType.Flatbuffers],
      ],
    );
    assert.equal(reader.info().hasSchema, true);
    reader.close();
  });

  test('bad timestamps are refused; actions outside the enum are stored as Unknown', async () => {
    const bytes = await recordToBytes([], {}, testContext(), (w) => {
      assert.throws(
        () => writeFrame(w, raw(-1)),
        (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
      );
      assert.throws(
        () => writeFrame(w, raw(Number.NaN)),
        (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
      );
      writeFrame(w, raw(7, { actionType: 42 as ActionType }));
    });
    const reader = await openBytes(bytes);
    assert.deepEqual(
      readFrames(reader).map((f) => [f.timestamp, f.actionType]),
      [[7, ActionType.Unknown]],
    );
    assert.equal(reader.info().urls[0]!.type, 'Unknown');
    reader.close();
  });

  test('times up to what MCAP stores exactly come back exact; a later one is refused (LIMIT_REACHED), nothing of it kept', async () => {
    // Up to ~834 days after the start the ns offset is an exact double; past it times came back 1-2 µs off, and near
    // 2^53 µs wrapped. Far publish times are written as absolute ns and read back from the halves, exact too (9e15 + 21
    // µs came back as + 22).
    const times = [1, 1e9, 7_777_777_777_777, 65_432_109_876_543, MAX_LOG_OFFSET_US - 1, MAX_LOG_OFFSET_US];
    const bytes = await recordToBytes([], {}, testContext(), (w) => {
      for (const t of times) writeFrame(w, raw(t, { publishTime: t === 1 ? 9e15 + 21 : t - 7 }));
      for (const late of [MAX_LOG_OFFSET_US + 1, 1e14 + 1, 2 ** 53 - 1])
        assert.throws(
          () => writeFrame(w, raw(late)),
          (e: unknown) =>
            BagError.isInstance(e) && e.code === 'LIMIT_REACHED' && e.url === 'dds://a' && /834 days/.test(e.message),
        );
    });
    const reader = await openBytes(bytes);
    assert.deepEqual(
      readFrames(reader).map((f) => [f.timestamp, f.publishTime]),
      times.map((t) => [t, t === 1 ? 9e15 + 21 : t - 7]),
    );
    assert.equal(reader.info().urls[0]!.count, times.length);
    reader.close();
  });

  test('a url id that names another url, or is no index, still finds the frame its own channel', async () => {
    const bytes = await recordToBytes([], {}, testContext(), (w) => {
      w.write(raw(1), 0);
      w.write(raw(2, { url: 'dds://b' }), 0); // id 0 is dds://a's
      w.write(raw(3), 0);
      w.write(raw(4, { url: 'dds://b' }), -1);
      w.write(raw(5, { url: 'dds://b' }), 1.5);
      w.write(raw(6, { url: 'dds://b' }), 1);
    });
    const reader = await openBytes(bytes);
    assert.deepEqual(
      readFrames(reader).map((f) => [f.timestamp, f.url]),
      [
        [1, 'dds://a'],
        [2, 'dds://b'],
        [3, 'dds://a'],
        [4, 'dds://b'],
        [5, 'dds://b'],
        [6, 'dds://b'],
      ],
    );
    assert.deepEqual(
      reader.info().urls.map((u) => [u.url, u.count]),
      [
        ['dds://a', 2],
        ['dds://b', 4],
      ],
    );
    reader.close();
  });

  test('a closed writer refuses frames; close is idempotent', async () => {
    await recordToBytes([raw(1)], {}, testContext(), (w) => {
      w.close();
      w.close();
      assert.throws(
        () => writeFrame(w, raw(2)),
        (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
      );
    });
  });
});
