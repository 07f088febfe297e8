import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { type Backend, BagWriter, registerBackend } from '@vlink/bag';
import { memoryBackend, sampleFrames } from '@vlink/bag-core/testing';
import { serve, type RunningServer } from './index.js';

// GET /v1/bags over HTTP: paging with limit and cursor, the cache of each bag's count by file version, errors in the
// listing, and the server answering other requests while a listing waits on its opens. Nothing here is timed: a
// backend that counts its opens, and one whose opens wait for the test, say what happened.

/** `.counted` bags (memjson inside), opened on the server's thread, each open counted by file name. */
const opens = new Map<string, number>();
const countedBackend: Backend = {
  ...memoryBackend,
  name: 'test-counted',
  extensions: ['.counted'],
  workerModule: undefined,
  openReader: (path, options) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    opens.set(name, (opens.get(name) ?? 0) + 1);
    return memoryBackend.openReader(path, options);
  },
};
/** `.gated` bags: their opens wait until the test opens the gate. */
let gate: Promise<void> = Promise.resolve();
let gateReached: () => void = () => undefined;
const gatedBackend: Backend = {
  ...memoryBackend,
  name: 'test-gated',
  extensions: ['.gated'],
  workerModule: undefined,
  openReader: async (path, options) => {
    gateReached();
    await gate;
    return memoryBackend.openReader(path, options);
  },
};
registerBackend(memoryBackend);
registerBackend(countedBackend);
registerBackend(gatedBackend);

const base = mkdtempSync(join(tmpdir(), 'vlink-list-http-'));
const root = join(base, 'root');
let server: RunningServer;

/** Writes a bag of `count` frames at `id`; `.counted` and `.gated` ones are memjson bags renamed. */
async function writeBag(id: string, count: number): Promise<void> {
  const path = join(root, id);
  mkdirSync(dirname(path), { recursive: true });
  const renamed = /\.(counted|gated)$/.test(id);
  const writer = await BagWriter.create(renamed ? `${path}.tmp.memjson` : path, { syncMode: true });
  for (const frame of sampleFrames(count)) writer.push({ ...frame });
  await writer.close();
  if (renamed) renameSync(`${path}.tmp.memjson`, path);
}

const IDS = ['b.memjson', 'a/x.memjson', 'a.memjson', 'a-b/y.memjson', 'a/b/c.memjson', 'z/z.memjson', 'c.counted'];

before(async () => {
  for (const [i, id] of IDS.entries()) await writeBag(id, 3 + i);
  await writeBag('drive.vdb', 12);
  server = await serve({ root, port: 0, workers: 2 });
});
after(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

interface Listed {
  bags: Array<{ id: string; messageCount: number | null; size: number; error?: { code: string; message: string } }>;
  next: string | null;
}

async function list(query = '', on: RunningServer = server): Promise<Listed> {
  const res = await fetch(`${on.url}/v1/bags${query}`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text) as Listed;
}

const byId = (listed: Listed, id: string) => listed.bags.find((b) => b.id === id);

describe('GET /v1/bags: paging and the count cache', () => {
  test('without limit: every bag, next null; with it: pages holding each bag once, in the same order', async () => {
    const whole = await list();
    assert.equal(whole.next, null);
    assert.equal(byId(whole, 'drive.vdb')?.messageCount, 12);
    const order = whole.bags.map((b) => b.id);
    assert.deepEqual([...order].sort(), [...IDS, 'drive.vdb'].sort());
    // The walk's order: a folder's bags at the place of its name (a/… before a-b/… and a.memjson).
    assert.deepEqual(order.slice(0, 4), ['a/b/c.memjson', 'a/x.memjson', 'a-b/y.memjson', 'a.memjson']);
    for (const limit of [1, 3, 8, 100]) {
      const seen: Listed['bags'] = [];
      let cursor: string | null = null;
      do {
        const page: Listed = await list(`?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.ok(page.bags.length >= 1 && page.bags.length <= limit);
        seen.push(...page.bags);
        cursor = page.next;
      } while (cursor);
      assert.deepEqual(seen, whole.bags, `limit=${limit}`);
    }
  });

  test('a cursor works on another server over the same folder (a restart): it resumes after its last id', async () => {
    const first = await list('?limit=3');
    const other = await serve({ root, port: 0, workers: 0 });
    try {
      const rest = await list(`?cursor=${encodeURIComponent(first.next!)}`, other);
      assert.deepEqual(
        [...first.bags, ...rest.bags].map((b) => b.id),
        (await list()).bags.map((b) => b.id),
      );
      assert.equal(rest.next, null);
    } finally {
      await other.close();
    }
  });

  test('an unchanged bag is not opened again; a rewritten one is, and shows its new count', async () => {
    await list();
    const before = opens.get('c.counted') ?? 0;
    assert.ok(before >= 1);
    assert.equal(byId(await list(), 'c.counted')?.messageCount, 9);
    assert.equal(opens.get('c.counted'), before, 'listed again from the cache');
    await writeBag('c.counted', 40);
    assert.equal(byId(await list(), 'c.counted')?.messageCount, 40);
    assert.equal(opens.get('c.counted'), before + 1);
    assert.equal(byId(await list('?limit=100'), 'c.counted')?.messageCount, 40);
    assert.equal(opens.get('c.counted'), before + 1);
  });

  test('a bag that cannot be opened is listed with its typed error, from the cache too; fixed, with its count', async () => {
    writeFileSync(join(root, 'broken.memjson'), 'not a bag');
    for (let round = 0; round < 2; round++) {
      const broken = byId(await list(), 'broken.memjson');
      assert.equal(broken?.messageCount, null);
      assert.equal(broken?.error?.code, 'CORRUPT_FILE');
      assert.ok(!broken?.error?.message.includes(root), 'no server path');
    }
    await writeBag('broken.memjson', 5);
    const fixed = byId(await list(), 'broken.memjson');
    assert.deepEqual([fixed?.messageCount, fixed?.error], [5, undefined]);
    rmSync(join(root, 'broken.memjson'));
  });

  test('while a listing waits on its opens, health and other bags answer', async () => {
    await writeBag('slow.gated', 4);
    let release!: () => void;
    gate = new Promise((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (gateReached = resolve));
    let settled = false;
    const listing = list().finally(() => (settled = true));
    try {
      await reached;
      const health = await fetch(`${server.url}/v1/health`);
      assert.equal(health.status, 200);
      await health.text();
      const page = await fetch(`${server.url}/v1/bags/drive.vdb/messages?limit=5`);
      assert.equal(page.status, 200);
      assert.equal(((await page.json()) as { messages: unknown[] }).messages.length, 5);
      const info = await fetch(`${server.url}/v1/bags/a.memjson/info`);
      assert.equal(((await info.json()) as { messageCount: number }).messageCount, 5);
      assert.equal(settled, false, 'the listing was still waiting');
    } finally {
      release();
    }
    assert.equal(byId(await listing, 'slow.gated')?.messageCount, 4);
    rmSync(join(root, 'slow.gated'));
  });

  test('a malformed limit or cursor is a 400 naming it', async () => {
    for (const [query, name] of [
      ['?limit=x', 'limit'],
      ['?limit=-1', 'limit'],
      ['?cursor=nope', 'cursor'],
      ['?cursor=eyJ2IjoxfQ', 'cursor'],
    ] as const) {
      const res = await fetch(`${server.url}/v1/bags${query}`);
      assert.equal(res.status, 400, query);
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'INVALID_ARGUMENT');
      assert.match(body.error.message, new RegExp(`"${name}"`));
    }
  });
});
