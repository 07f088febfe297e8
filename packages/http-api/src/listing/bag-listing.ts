import { BagError, bagExtensionOf } from '@vlink/bag';
import type { BagPlace } from '../store/bag-place.js';
import { MAX_LISTED_FILES } from '../store/list-bags.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import { compareIds, decodeListCursor, encodeListCursor, firstAfter } from './list-cursor.js';
import { type ListedFacts, SummaryCache } from './summary-cache.js';

/**
 * Groups of unknown bags opened at once, and their size. A group is one job of a bag worker (`BagWork.facts`), which
 * answers after ~25 ms at most, the rest going in its next job; the pool runs these jobs after those of other
 * clients, so enough of them to keep every worker busy delay another client's job by one such job at most. Where
 * bags are read on the server's own thread (a url root), this is how many are opened at once, as before.
 */
const LIST_CONCURRENCY = 8;
const OPEN_GROUP = 64;
/** Cached facts come back without I/O: the listing lets other requests run after this many of them in a row. */
const YIELD_EVERY = 2000;
/** Walks kept for the next pages of a paged listing, and how long after their last use. */
const MAX_WALKS = 4;
const WALK_TTL_MS = 60_000;

/** One bag as `GET /v1/bags` shows it (`BagSummary` in the OpenAPI document). */
export interface BagSummary {
  id: string;
  format: string;
  size: number;
  modified: string;
  messageCount: number | null;
  error?: { code: string; message: string };
}

export interface ListRequest {
  /** Bags per page; default every bag (up to the walk's file limit). */
  limit?: number;
  /** The `next` token of the previous page. */
  cursor?: string;
  /** The client went away: stop opening bags (what was read stays cached). */
  signal?: AbortSignal;
}

export interface ListPage {
  bags: BagSummary[];
  /** Token for the following page; null when this page reached the end. */
  next: string | null;
}

interface Walk {
  id: number;
  bags: ResolvedBag[];
  usedAt: number;
}

/**
 * `GET /v1/bags`: the bags under the root in a stable order (see compareIds), each with its message count.
 *
 * Opening a bag is what costs (a SQLite open and schema check, an MCAP summary: ~0.1–0.5 ms of CPU each, plus a round
 * trip to a worker), so the facts of each file version are cached (SummaryCache) and a listing of an unchanged tree
 * opens nothing. Every page walks the tree afresh (new and changed bags show at once), except the pages after the
 * first of a paged listing, which reuse the walk their first page made: walking 20,000 files costs seconds of file
 * system round trips, and paging through a tree must not cost that per page. A token outliving its walk still works:
 * the tree is walked again and the listing continues after the token's last id.
 */
export class BagListing {
  private readonly cache = new SummaryCache();
  private readonly walks = new Map<number, Walk>();
  private lastWalk = 0;

  constructor(
    private readonly place: Pick<BagPlace, 'list'>,
    /** Opens the bags (in a worker, usually) and says what the listing shows of each, in order. */
    private readonly open: (bags: readonly ResolvedBag[]) => Promise<ListedFacts[]>,
  ) {}

  async page(request: ListRequest = {}): Promise<ListPage> {
    const limit = Math.min(MAX_LISTED_FILES, Math.max(1, request.limit ?? MAX_LISTED_FILES));
    const position = request.cursor === undefined ? undefined : decodeListCursor(request.cursor);
    const walk = (position && this.reuse(position.walk)) ?? (await this.walk());
    const start = position ? firstAfter(walk.bags, (b) => b.id, position.after) : 0;
    const chosen = walk.bags.slice(start, start + limit);
    const bags = await this.summaries(chosen, request.signal);
    const more = start + chosen.length < walk.bags.length;
    if (more) this.keep(walk);
    return { bags, next: more ? encodeListCursor({ after: chosen.at(-1)!.id, walk: walk.id }) : null };
  }

  close(): void {
    this.cache.clear();
    this.walks.clear();
  }

  /** Cached file versions (for tests). */
  get cached(): number {
    return this.cache.size;
  }

  private async walk(): Promise<Walk> {
    const bags = (await this.place.list()).sort((a, b) => compareIds(a.id, b.id));
    // A complete walk says which bags exist: the facts of the others are dropped, so the cache stays the tree's size.
    this.cache.keepOnly(new Set(bags.map((b) => b.path)));
    return { id: ++this.lastWalk, bags, usedAt: Date.now() };
  }

  private reuse(id: number): Walk | undefined {
    this.expire();
    const walk = this.walks.get(id);
    if (walk) walk.usedAt = Date.now();
    return walk;
  }

  private keep(walk: Walk): void {
    walk.usedAt = Date.now();
    this.walks.delete(walk.id);
    this.walks.set(walk.id, walk);
    this.expire();
    while (this.walks.size > MAX_WALKS) this.walks.delete(this.walks.keys().next().value!);
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, walk] of this.walks) if (now - walk.usedAt > WALK_TTL_MS) this.walks.delete(id);
  }

  /**
   * Summaries of `bags` in their order. The bags the cache does not know are opened in groups (one worker job per
   * group, see `BagWork.facts`), LIST_CONCURRENCY groups at a time.
   */
  private async summaries(bags: readonly ResolvedBag[], signal: AbortSignal | undefined): Promise<BagSummary[]> {
    const facts = new Array<Promise<ListedFacts>>(bags.length);
    const missing: Array<Pending & { bag: ResolvedBag }> = [];
    bags.forEach((bag, i) => {
      const known = this.cache.get(bag);
      if (known) {
        facts[i] = known;
        return;
      }
      const pending = pendingFacts();
      this.cache.put(bag, pending.facts);
      facts[i] = pending.facts;
      missing.push({ ...pending, bag });
    });
    let next = 0;
    const opener = async () => {
      while (next < missing.length && !signal?.aborted) {
        const group = missing.slice(next, next + OPEN_GROUP);
        next += group.length;
        const found = await this.open(group.map((m) => m.bag));
        for (const [j, m] of group.entries()) m.settle(found[j]!);
      }
    };
    try {
      await Promise.all(
        Array.from({ length: Math.min(LIST_CONCURRENCY, Math.ceil(missing.length / OPEN_GROUP)) }, opener),
      );
    } finally {
      // Never leave a promise in the cache that nothing will settle (the client went away, or opening threw).
      for (const m of missing) m.fail(new BagError('ABORTED', 'the listing stopped'));
    }
    if (signal?.aborted) throw new BagError('ABORTED', 'the client went away');
    const out: BagSummary[] = new Array(bags.length);
    for (let i = 0; i < bags.length; i++) {
      const bag = bags[i]!;
      // A bag another listing was opening when that listing's client went away: opened here instead.
      out[i] = summaryOf(bag, await facts[i]!.catch(() => this.openOne(bag)));
      if (i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setTimeout(resolve, 0));
    }
    return out;
  }

  private openOne(bag: ResolvedBag): Promise<ListedFacts> {
    const facts = this.open([bag]).then((found) => found[0]!);
    this.cache.put(bag, facts);
    return facts;
  }
}

interface Pending {
  facts: Promise<ListedFacts>;
  /** Both are no-ops once one of them ran. */
  settle(facts: ListedFacts): void;
  fail(error: Error): void;
}

function pendingFacts(): Pending {
  let settle!: (facts: ListedFacts) => void;
  let fail!: (error: Error) => void;
  const facts = new Promise<ListedFacts>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  return { facts, settle, fail };
}

/** The summary as the listing always showed it (same fields, same order). */
function summaryOf(bag: ResolvedBag, facts: ListedFacts): BagSummary {
  const base = {
    id: bag.id,
    format: bag.format ?? bagExtensionOf(bag.path).slice(1),
    size: bag.size,
    modified: new Date(bag.mtimeMs).toISOString(),
  };
  if (facts.error) return { ...base, messageCount: null, error: facts.error };
  return { ...base, size: Math.max(bag.size, facts.fileSize || 0), messageCount: facts.messageCount };
}
