import type { ResolvedBag } from '../store/resolve-id.js';

/** What the listing shows of a bag it opened: its message count and size, or why it could not be opened. */
export type ListedFacts =
  | { messageCount: number; fileSize: number; error?: undefined }
  | { error: { code: string; message: string } };

/**
 * Error codes that say something about the file's bytes, so the same file version fails the same way again: those
 * are remembered like a count. Anything else (a deadline, a busy or lost worker, a file that vanished, an I/O error,
 * a backend a worker could not load) may go away with the next try and is not.
 */
const FILE_ERRORS: ReadonlySet<string> = new Set([
  'CORRUPT_FILE',
  'CORRUPT_DATA',
  'UNSUPPORTED_FORMAT',
  'VERSION_MISMATCH',
]);

interface Entry {
  size: number;
  mtimeMs: number;
  facts: Promise<ListedFacts>;
}

/**
 * The listing's memory of each bag's facts, by real path and file version (size and mtime, as every cache of the
 * server), so a listing opens only the bags that are new or changed since the last one: an unchanged folder of 20,000
 * bags is listed without opening any. A bag being recorded changes size and mtime, so its count is read again.
 *
 * An entry is a promise, put in before the bag is opened: listings running at once share one open per file version.
 * Bounded by the served tree: `keepOnly` drops the bags a fresh walk no longer found, so the cache never holds more
 * entries than the walk's file limit (about 100 bytes each).
 */
export class SummaryCache {
  private readonly entries = new Map<string, Entry>();

  get size(): number {
    return this.entries.size;
  }

  /** The facts of this version of the bag, when known or being read; undefined otherwise. */
  get(bag: ResolvedBag): Promise<ListedFacts> | undefined {
    const known = this.entries.get(bag.path);
    return known && known.size === bag.size && known.mtimeMs === bag.mtimeMs ? known.facts : undefined;
  }

  /** Remembers `facts` for this version of the bag; forgotten again if it fails or ends in a passing error. */
  put(bag: ResolvedBag, facts: Promise<ListedFacts>): void {
    const entry: Entry = { size: bag.size, mtimeMs: bag.mtimeMs, facts };
    this.entries.set(bag.path, entry);
    const forget = () => {
      if (this.entries.get(bag.path) === entry) this.entries.delete(bag.path);
    };
    facts.then((found) => {
      if (found.error && !FILE_ERRORS.has(found.error.code)) forget();
    }, forget);
  }

  /** Drops every entry whose path is not in `paths` (the bags a complete walk found). */
  keepOnly(paths: ReadonlySet<string>): void {
    for (const path of this.entries.keys()) if (!paths.has(path)) this.entries.delete(path);
  }

  clear(): void {
    this.entries.clear();
  }
}
