import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, type BagReader, type Frame, SchemaType } from '@vlink/bag';
import type { MessageQuery, Position } from './cursor-token.js';
import { QueryCursor } from './query-cursor.js';

/** A reader over log times in read order that honours `beginTime` as backends do, and counts the frames it yields. */
function stubReader(times: number[]): { reader: BagReader; read: () => number } {
  let read = 0;
  const reader = {
    async *frames(options: { beginTime?: number } = {}) {
      const begin = (options.beginTime ?? 0) * 1000;
      for (const [i, t] of times.entries()) {
        if (begin > 0 && t < begin) continue;
        read++;
        yield {
          timestamp: t,
          url: 'a',
          data: Uint8Array.of(i),
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: ActionType.Publish,
        } satisfies Frame;
      }
    },
  } as unknown as BagReader;
  return { reader, read: () => read };
}

/** Pages of `limit` frames, each from a fresh QueryCursor at the previous page's position (as the route does). */
async function pageAll(reader: BagReader, limit: number, query: MessageQuery = {}): Promise<number[]> {
  const got: number[] = [];
  let from: Position | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const cursor = new QueryCursor(reader, query, from);
    for (let i = 0; i < limit; i++) {
      const frame = await cursor.next();
      if (!frame) break;
      got.push(frame.data[0]!);
    }
    const more = await cursor.hasMore();
    from = cursor.position();
    await cursor.close();
    if (!more) return got;
  }
  assert.fail('paging did not end');
}

describe('QueryCursor', () => {
  test('a time-ordered query resumes by seeking: after the one read that finds the order, no page re-reads', async () => {
    const times = Array.from({ length: 100 }, (_, i) => 1000 + Math.floor(i / 3) * 1000);
    const { reader, read } = stubReader(times);
    assert.deepEqual(await pageAll(reader, 10), [...times.keys()]);
    // One read of the query to find its order (100), then each page its own frames, at most 3 already returned at the
    // seek time and a peek (≤ 14 × 10); resuming by count would read 11, 21, … 101 frames: 560.
    assert.ok(read() < 300, `read ${read()}`);
  });

  test('a query that goes back in time resumes by count, in read order, each frame once', async () => {
    const times = [0, 3000, 1000, 2000, 4000, 3500, 500, 3000, -5, 3000];
    for (const limit of [1, 2, 3, 7]) {
      const { reader } = stubReader(times);
      assert.deepEqual(await pageAll(reader, limit), [...times.keys()], `limit ${limit}`);
      assert.deepEqual(await pageAll(reader, limit, { endUs: 3000 }), [0, 1, 2, 3, 6, 7, 8, 9], `limit ${limit}`);
    }
  });

  test('negative times page on (a seek at or below 0 is no seek)', async () => {
    const times = [-30, -20, -20, -10, 0, 0, 10];
    const { reader } = stubReader(times);
    for (const limit of [1, 2, 3]) assert.deepEqual(await pageAll(reader, limit), [...times.keys()]);
  });
});
