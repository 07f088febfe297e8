import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, registerBackend } from '@vlink/bag';
import { memoryBackend } from '@vlink/bag-core/testing';
import { toBase64Url } from '../messages/base64.js';
import { findBags } from '../store/list-bags.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import { BagListing, type BagSummary } from './bag-listing.js';
import { compareIds, decodeListCursor } from './list-cursor.js';
import type { ListedFacts } from './summary-cache.js';

// The listing's paging and its cache, over a tree held in memory: which bags each listing opens is counted, so the
// tests say what a second listing costs without timing anything.

registerBackend(memoryBackend);
const base = mkdtempSync(join(tmpdir(), 'vlink-listing-'));
after(() => rmSync(base, { recursive: true, force: true }));

/** A tree of bags by id; `count` is what opening one says, `fail` a code it fails with instead. */
interface FakeBag {
  size: number;
  mtimeMs: number;
  count: number;
  fail?: string;
}

function fakeTree(ids: string[]) {
  const tree = new Map<string, FakeBag>(ids.map((id, i) => [id, { size: 100 + i, mtimeMs: 1_000, count: i }]));
  const opened: string[] = [];
  let gate: Promise<void> | undefined;
  const place = {
    list: async (): Promise<ResolvedBag[]> =>
      // The walk's own order is not the listing's concern: handed over shuffled.
      [...tree].reverse().map(([id, b]) => ({ id, path: `/root/${id}`, size: b.size, mtimeMs: b.mtimeMs })),
  };
  const open = async (bags: readonly ResolvedBag[]): Promise<ListedFacts[]> => {
    opened.push(...bags.map((b) => b.id));
    await gate;
    return bags.map((b) => {
      const bag = tree.get(b.id)!;
      return bag.fail ? { error: { code: bag.fail, message: 'no' } } : { messageCount: bag.count, fileSize: bag.size };
    });
  };
  return {
    tree,
    opened,
    listing: new BagListing(place, open),
    /** Opens wait until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

const ids = (bags: BagSummary[]) => bags.map((b) => b.id);
const IDS = ['b.vdb', 'a/x.vdb', 'a.vdb', 'a-b/y.vdb', 'A.vdb', 'a/b/c.vdb', 'z/z/z.vcap', 'a/y.vdb', 'c.vdb', 'ä.vdb'];

describe('BagListing', () => {
  test('every bag once, in the order of compareIds, with or without paging', async () => {
    const { listing } = fakeTree(IDS);
    const whole = await listing.page();
    assert.equal(whole.next, null);
    assert.deepEqual(ids(whole.bags), [...IDS].sort(compareIds));
    for (const limit of [1, 3, 4, 10, 11]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await listing.page({ limit, ...(cursor ? { cursor } : {}) });
        assert.ok(page.bags.length <= limit && page.bags.length > 0);
        seen.push(...ids(page.bags));
        cursor = page.next ?? undefined;
        pages++;
      } while (cursor);
      assert.deepEqual(seen, ids(whole.bags), `limit ${limit}`);
      assert.equal(pages, Math.ceil(IDS.length / limit));
    }
  });

  test('a token outlives its walk and its server: the listing resumes after its last id', async () => {
    const first = fakeTree(IDS);
    const page = await first.listing.page({ limit: 4 });
    // Another server (no walk of its own), whose tree gained a bag before the cursor and one after it.
    const other = fakeTree([...IDS, '0.vdb', 'zz.vdb']);
    const rest = await other.listing.page({ cursor: page.next! });
    assert.equal(rest.next, null);
    const after = decodeListCursor(page.next!).after;
    assert.equal(after, page.bags.at(-1)!.id);
    assert.deepEqual(
      ids(rest.bags),
      [...IDS, 'zz.vdb'].sort(compareIds).filter((id) => compareIds(id, after) > 0),
    );
  });

  test('the next pages reuse the walk of the first: a bag added meanwhile shows in the next listing', async () => {
    const { listing, tree } = fakeTree(IDS);
    const first = await listing.page({ limit: 5 });
    tree.set('zzz.vdb', { size: 1, mtimeMs: 1, count: 1 });
    const second = await listing.page({ limit: 100, cursor: first.next! });
    assert.ok(!ids(second.bags).includes('zzz.vdb'));
    assert.ok(ids((await listing.page()).bags).includes('zzz.vdb'));
  });

  test('an unchanged bag is opened once; a changed one (size or mtime) again, and its new count is listed', async () => {
    const { listing, tree, opened } = fakeTree(IDS);
    await listing.page();
    assert.equal(opened.length, IDS.length);
    await listing.page();
    await listing.page({ limit: 2 });
    assert.equal(opened.length, IDS.length, 'nothing opened again');
    tree.set('a.vdb', { ...tree.get('a.vdb')!, mtimeMs: 2_000, count: 77 });
    tree.set('c.vdb', { ...tree.get('c.vdb')!, size: 5, count: 78 });
    const bags = (await listing.page()).bags;
    assert.deepEqual(opened.slice(IDS.length).sort(), ['a.vdb', 'c.vdb']);
    assert.equal(bags.find((b) => b.id === 'a.vdb')!.messageCount, 77);
    assert.deepEqual(
      [bags.find((b) => b.id === 'c.vdb')!.messageCount, bags.find((b) => b.id === 'c.vdb')!.size],
      [78, 5],
    );
  });

  test('errors are listed in place; a file error is kept like a count, a passing one is tried again', async () => {
    const { listing, tree, opened } = fakeTree(IDS);
    tree.get('b.vdb')!.fail = 'CORRUPT_FILE';
    tree.get('c.vdb')!.fail = 'TIMEOUT';
    for (let round = 0; round < 2; round++) {
      const bags = (await listing.page()).bags;
      assert.deepEqual(
        bags.find((b) => b.id === 'b.vdb'),
        {
          id: 'b.vdb',
          format: 'vdb',
          size: 100,
          modified: new Date(1_000).toISOString(),
          messageCount: null,
          error: { code: 'CORRUPT_FILE', message: 'no' },
        },
      );
      assert.equal(bags.find((b) => b.id === 'c.vdb')!.error?.code, 'TIMEOUT');
    }
    assert.deepEqual(
      opened.filter((id) => id === 'b.vdb' || id === 'c.vdb'),
      ['b.vdb', 'c.vdb', 'c.vdb'],
    );
  });

  test('the cache holds the bags of the last walk only', async () => {
    const { listing, tree } = fakeTree(IDS);
    await listing.page();
    assert.equal(listing.cached, IDS.length);
    tree.delete('a.vdb');
    tree.delete('b.vdb');
    await listing.page();
    assert.equal(listing.cached, IDS.length - 2);
  });

  test('listings running together share each open', async () => {
    const { listing, opened, hold } = fakeTree(IDS);
    const release = hold();
    const both = Promise.all([listing.page(), listing.page(), listing.page({ limit: 3 })]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const [one, two] = await both;
    assert.deepEqual(one.bags, two.bags);
    assert.equal(opened.length, IDS.length);
  });

  test('a listing whose client went away stops with ABORTED and leaves nothing half-open for the next', async () => {
    // More bags than the listing opens at once: some are still waiting their turn when the client goes.
    const many = Array.from({ length: 600 }, (_, i) => `run-${String(i).padStart(3, '0')}.vdb`);
    const { listing, opened, hold } = fakeTree(many);
    const release = hold();
    const abort = new AbortController();
    const gone = listing.page({ signal: abort.signal });
    while (opened.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    abort.abort();
    release();
    await assert.rejects(gone, (e: unknown) => BagError.isInstance(e) && e.code === 'ABORTED');
    const started = opened.length;
    assert.ok(started < many.length, 'the rest was not opened');
    const next = await listing.page();
    assert.equal(next.bags.length, many.length);
    assert.ok(next.bags.every((b, i) => b.messageCount === i));
    assert.equal(opened.length, many.length, 'what the first listing read is kept; the rest is opened once');
  });

  test('a malformed cursor or a token of another route is a 400 naming cursor', async () => {
    const { listing } = fakeTree(IDS);
    const messagesToken = toBase64Url(
      new TextEncoder().encode(JSON.stringify({ v: 1, id: 'x', q: {}, p: { t: 0, k: 0, n: 0 } })),
    );
    for (const cursor of ['nope!', 'bm9wZQ', messagesToken])
      await assert.rejects(
        listing.page({ cursor }),
        (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT' && /"cursor"/.test(e.message),
        cursor,
      );
  });

  test('compareIds is the order of the folder walk, so a listing without paging keeps the order it had', async () => {
    const tree = join(base, 'order');
    // (No two names differing in case only: the tree may be on a case-insensitive file system.)
    const names = IDS.filter((id) => id !== 'A.vdb').map((id) => id.replace(/\.(vdb|vcap)$/, '.memjson'));
    for (const id of [...names, 'Z.memjson', 'a/b.memjson', 'a0.memjson']) {
      mkdirSync(join(tree, id, '..'), { recursive: true });
      writeFileSync(join(tree, id), '{}');
    }
    const walked = (await findBags(realpathSync(tree))).map((b) => b.id);
    assert.equal(walked.length, IDS.length + 2);
    assert.notDeepEqual([...walked].sort(), walked, 'plain string order is not the walk order');
    assert.deepEqual([...walked].sort(compareIds), walked);
  });
});
