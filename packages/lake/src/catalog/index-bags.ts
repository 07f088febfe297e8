import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { BagError, BagReader } from '@vlink/bag';
import { type RegisterS3Options, registerS3, S3Client } from '@vlink/bag-s3';
import { type CatalogedBag, CatalogTables } from './catalog-tables.js';
import { describeBag } from './describe-bag.js';
import { discoverLocal } from './discover-local.js';
import { discoverS3 } from './discover-s3.js';
import type { FoundBag } from './found-bag.js';

export interface IndexOptions {
  /**
   * Where and as whom `s3://` sources are listed and read (`registerS3`'s options); default: the `AWS_*` variables.
   * The first `s3://` source registers the scheme for `BagReader.create` with these options.
   */
  s3?: RegisterS3Options;
  /** Called after each bag is looked at (a progress line, a log). */
  onBag?: (event: IndexEvent) => void;
  signal?: AbortSignal;
}

export interface IndexEvent {
  bagId: string;
  location: string;
  outcome: 'added' | 'updated' | 'unchanged' | 'failed';
}

export interface IndexFailure {
  location: string;
  /** The `BagError` code (`CORRUPT_FILE`, `UNSUPPORTED_FORMAT`, `IO_ERROR`, …). */
  code: string;
  message: string;
}

/** What `indexBags` did: counts of bags by outcome, the failures, and the rows the catalog holds now. */
export interface IndexReport {
  catalog: string;
  /** New bags opened and added. */
  added: number;
  /** Bags whose size, mtime or ETag changed: opened again, their rows replaced. */
  updated: number;
  /** Bags kept as they were, without opening them. */
  unchanged: number;
  /** Bags of the old catalog that are gone: their rows are dropped (a bag that now fails is in `failed` only). */
  removed: number;
  failed: IndexFailure[];
  /** Rows of `bags.parquet` and `urls.parquet` written. */
  bags: number;
  urls: number;
}

let s3Registered = false;

/**
 * Indexes every bag under the sources (local folders, `s3://bucket/prefix`) into the catalog folder
 * (`bags.parquet`, `urls.parquet`), incrementally: a bag whose location, size, mtime (and ETag on S3) equal its row
 * is kept without opening it; new and changed bags are opened one at a time (memory is one bag's log times); rows of
 * bags that are gone are dropped; a bag that cannot be read is reported in `failed` with its code and keeps no row.
 * The catalog holds exactly the sources of this run. Both files are replaced whole (temporary file, rename).
 */
export async function indexBags(
  sources: readonly string[],
  catalogDir: string,
  options: IndexOptions = {},
): Promise<IndexReport> {
  if (sources.length === 0) throw new BagError('INVALID_ARGUMENT', 'nothing to index: give folders or s3:// prefixes');
  const dir = resolve(catalogDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', `cannot create the catalog folder ${dir}`, { file: dir });
  }
  const found = await discover(sources, options);
  const tables = await CatalogTables.open();
  try {
    const previous = new Map((await tables.load(dir)).map((bag) => [bag.location, bag]));
    const report: IndexReport = {
      catalog: dir,
      added: 0,
      updated: 0,
      unchanged: 0,
      removed: 0,
      failed: [],
      bags: 0,
      urls: 0,
    };
    const seen = new Set(found.map((bag) => bag.location));
    for (const location of previous.keys()) {
      if (seen.has(location)) continue;
      await tables.remove(location);
      report.removed++;
    }
    const ids = new Map<string, string>();
    const indexedAt = Date.now() * 1000;
    for (const bag of found) {
      options.signal?.throwIfAborted();
      const old = previous.get(bag.location);
      const fail = (error: unknown) => {
        const e = BagError.wrap(error, 'IO_ERROR', 'cannot read the bag');
        report.failed.push({ location: bag.location, code: e.code, message: e.message });
        options.onBag?.({ bagId: bag.bagId, location: bag.location, outcome: 'failed' });
      };
      const other = ids.get(bag.bagId);
      if (other !== undefined) {
        // `bag_id` keys the urls table: two roots with the same relative path cannot share one catalog. Its old row
        // goes by location: the first bag's row, just added under the same id, stays.
        if (old) await tables.remove(old.location);
        fail(
          new BagError(
            'INVALID_ARGUMENT',
            `bag id "${bag.bagId}" is also the id of ${other}: index these roots into separate catalogs`,
          ),
        );
        continue;
      }
      ids.set(bag.bagId, bag.location);
      if (old && unchanged(old, bag)) {
        report.unchanged++;
        options.onBag?.({ bagId: bag.bagId, location: bag.location, outcome: 'unchanged' });
        continue;
      }
      if (old) await tables.remove(old.location);
      let rows: Awaited<ReturnType<typeof describeBag>>;
      try {
        const reader = await BagReader.create(bag.location);
        try {
          rows = await describeBag(reader, bag, indexedAt);
        } finally {
          reader.close();
        }
      } catch (error) {
        fail(error);
        continue;
      }
      await tables.add(rows.bag, rows.urls);
      if (old) report.updated++;
      else report.added++;
      options.onBag?.({ bagId: bag.bagId, location: bag.location, outcome: old ? 'updated' : 'added' });
    }
    await tables.write(dir);
    const counts = await tables.counts();
    report.bags = counts.bags;
    report.urls = counts.urls;
    return report;
  } finally {
    tables.close();
  }
}

/**
 * True when the old row still describes the bag: same file facts and the same id (a bag found under another root
 * than before has another `bag_id`, which the row must say, and which the duplicate check above went by).
 */
function unchanged(old: CatalogedBag, now: FoundBag): boolean {
  return old.bagId === now.bagId && old.size === now.size && old.modifiedUs === now.modifiedUs && old.etag === now.etag;
}

async function discover(sources: readonly string[], options: IndexOptions): Promise<FoundBag[]> {
  const out: FoundBag[] = [];
  let client: S3Client | undefined;
  for (const source of sources) {
    if (/^s3:\/\//i.test(source)) {
      if (!s3Registered || options.s3) {
        registerS3(options.s3 ?? {});
        s3Registered = true;
      }
      client ??= new S3Client(options.s3 ?? {});
      out.push(...(await discoverS3(client, source)));
    } else {
      out.push(...(await discoverLocal(source)));
    }
  }
  // Overlapping sources (a folder and one of its subfolders) find some bags twice: the first source names them.
  const seen = new Set<string>();
  return out.filter((bag) => !seen.has(bag.location) && seen.add(bag.location));
}
