import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import { loadDriver } from '@vlink/bag-sqlite';
import { serve } from '../index.js';

// Pages must hand out every message of the unpaged stream exactly once, in its order, whatever the timestamps do:
// files read in file order that go back in time (MCAP, an unindexed `.vdb`), negative times, hand-made rows.
const dir = mkdtempSync(join(tmpdir(), 'vlink-paging-'));

/** Log times of a recording merged from sources (legal in MCAP): file order goes back in time. */
const UNORDERED = [0, 3000, 1000, 2000, 4000, 3500, 500, 3000, 3000];

async function write(name: string, times: number[]): Promise<void> {
  const writer = await BagWriter.create(join(dir, name), { syncMode: true });
  for (const [i, t] of times.entries())
    writer.push({
      timestamp: t,
      url: i % 2 ? '/b' : '/a',
      data: new TextEncoder().encode(`m${i}`),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
}

async function alter(name: string, sql: string): Promise<void> {
  const db = (await loadDriver()).open(join(dir, name));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

interface Message {
  timestamp: number;
  data: string;
}

async function page(id: string, query: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/v1/bags/${id}/messages?${query}`);
  return { status: res.status, body: await res.json() };
}

/** Follows `next` to the end (at most 100 pages: an endless pager fails here instead of hanging). */
async function pages(id: string, limit: number, extra = ''): Promise<string[]> {
  const got: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const { status, body } = await page(id, `limit=${limit}${extra}${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(status, 200, JSON.stringify(body));
    got.push(...body.messages.map((m: Message) => `${m.timestamp}:${atob(m.data)}`));
    cursor = body.next;
    if (!cursor) return got;
  }
  assert.fail(`${id}: still paging after 100 pages (${got.slice(-3).join(' ')})`);
}

async function bodyUntilAbort(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const step = await reader.read();
      if (step.done) return text;
      text += decoder.decode(step.value, { stream: true });
    }
  } catch {
    return text;
  }
}

async function unpaged(id: string, extra = ''): Promise<string[]> {
  const text = await (await fetch(`${server.url}/v1/bags/${id}/messages?format=ndjson${extra}`)).text();
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Message)
    .map((m) => `${m.timestamp}:${atob(m.data)}`);
}

await write('unordered.vcap', UNORDERED);
await write('ordered.vdb', [0, 1000, 1000, 1000, 2000, 3000]);
// An unindexed `.vdb` is read in rowid order, so out-of-order elapsed values page like an MCAP file.
await write('unindexed.vdb', [0, 1000, 2000, 3000, 4000, 5000, 6000]);
await alter(
  'unindexed.vdb',
  'DROP INDEX IF EXISTS idx_elapsed_url; DROP INDEX IF EXISTS idx_elapsed; UPDATE VLinkDatas SET elapsed = 500 WHERE rowid = 5; UPDATE VLinkDatas SET elapsed = 6000 WHERE rowid = 2;',
);
// Negative times (no VLink writer stores them; a hand-made or foreign file can): the pager must get past them.
await write('negative.vdb', [0, 1000, 2000, 3000, 4000]);
await alter(
  'negative.vdb',
  'UPDATE VLinkDatas SET elapsed = -5 WHERE rowid = 3; UPDATE VLinkDatas SET elapsed = -9 WHERE rowid = 4;',
);
await write('text-time.vdb', [0, 1000, 2000]);
await alter(
  'text-time.vdb',
  `UPDATE VLinkDatas SET elapsed = '1,"url":"/forged"}' || char(10) || '{"timestamp":1' WHERE rowid = 2`,
);
const server = await serve({ root: dir, port: 0 });

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('message pages follow the read order of the unpaged stream', () => {
  for (const id of ['unordered.vcap', 'unindexed.vdb', 'ordered.vdb', 'negative.vdb']) {
    test(`${id}: every page size returns each message once, in stream order`, async () => {
      const want = await unpaged(id);
      assert.equal(new Set(want).size, want.length);
      for (const limit of [1, 2, 3, 4, 1000]) assert.deepEqual(await pages(id, limit), want, `limit=${limit}`);
    });
  }

  test('the out-of-order MCAP file streams in file order, and windows and url filters page exactly too', async () => {
    assert.deepEqual(
      (await unpaged('unordered.vcap')).map((m) => Number(m.split(':')[0])),
      UNORDERED,
    );
    for (const extra of ['&begin=1&end=3.5', '&urls=/a', '&urls=/b&begin=0.5']) {
      const want = await unpaged('unordered.vcap', extra);
      assert.ok(want.length > 1, extra);
      for (const limit of [1, 2]) assert.deepEqual(await pages('unordered.vcap', limit, extra), want, extra);
    }
  });

  test('a cursor into a stream also resumes in stream order', async () => {
    const first = await page('unordered.vcap', 'limit=3');
    const rest = await unpaged('unordered.vcap', `&cursor=${first.body.next}`);
    assert.deepEqual(rest, (await unpaged('unordered.vcap')).slice(3));
  });

  test('negative times come first and page on: the token holds them', async () => {
    assert.deepEqual((await pages('negative.vdb', 1)).slice(0, 3), ['-9:m3', '-5:m2', '0:m0']);
  });

  test('a TEXT elapsed is CORRUPT_DATA, never a forged NDJSON line or a string timestamp', async () => {
    const { status, body } = await page('text-time.vdb', 'limit=10');
    assert.equal(status, 422, JSON.stringify(body));
    assert.equal(body.error.code, 'CORRUPT_DATA');
    // The stream sends the error line, then aborts the response (so a client never takes it for a complete body).
    const text = await bodyUntilAbort(await fetch(`${server.url}/v1/bags/text-time.vdb/messages?format=ndjson`));
    assert.match(text, /"CORRUPT_DATA"/);
    assert.doesNotMatch(text, /forged/);
    for (const line of text.trim().split('\n')) {
      const value = JSON.parse(line);
      if ('error' in value) assert.equal(value.error.code, 'CORRUPT_DATA');
      else assert.equal(typeof value.timestamp, 'number');
    }
  });
});
