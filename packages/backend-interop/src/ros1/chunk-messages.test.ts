import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ChunkMessages } from './chunk-messages.js';
import { Op } from './records.js';

/** One ROS 1 message data record: `op`, `conn`, `time` header fields, then the payload. */
function messageRecord(conn: number, sec: number, nsec: number, payload: Uint8Array): Uint8Array {
  const field = (name: string, value: Uint8Array) => {
    const out = new Uint8Array(4 + name.length + 1 + value.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, name.length + 1 + value.length, true);
    out.set(new TextEncoder().encode(`${name}=`), 4);
    out.set(value, 4 + name.length + 1);
    return out;
  };
  const u32s = (...values: number[]) => {
    const out = new Uint8Array(values.length * 4);
    values.forEach((v, i) => {
      new DataView(out.buffer).setUint32(i * 4, v, true);
    });
    return out;
  };
  const fields = [
    field('op', new Uint8Array([Op.MessageData])),
    field('conn', u32s(conn)),
    field('time', u32s(sec, nsec)),
  ];
  const headerLength = fields.reduce((n, f) => n + f.length, 0);
  const out = new Uint8Array(4 + headerLength + 4 + payload.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, headerLength, true);
  let at = 4;
  for (const f of fields) {
    out.set(f, at);
    at += f.length;
  }
  view.setUint32(at, payload.length, true);
  out.set(payload, at + 4);
  return out;
}

describe('ROS 1 chunk messages', () => {
  test('the smallest message record is the size the arrays are bounded by', () => {
    assert.equal(messageRecord(0, 0, 0, new Uint8Array(0)).length, 46);
  });

  test("a chunk info count no chunk could hold (fuzz foreign seed 64 case 849) sizes the arrays by the chunk's bytes", () => {
    const records = [messageRecord(1, 10, 5, new Uint8Array([1, 2])), messageRecord(1, 9, 0, new Uint8Array([3]))];
    const bytes = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
    bytes.set(records[0]!, 0);
    bytes.set(records[1]!, records[0]!.length);
    for (const claimed of [2 ** 31, 0x7fffffff, Number.NaN, -1, 2]) {
      const messages = new ChunkMessages(bytes, claimed, 'mem.bag', 0);
      assert.equal(messages.count, 2);
      assert.ok(messages.conn.length <= 16, `${claimed}: ${messages.conn.length} slots`);
      // Sorted by time: the second record first.
      assert.deepEqual([...messages.order], [1, 0]);
    }
  });
});
