import { storableName } from '../model/url-identity.js';

/**
 * Frames that did not reach the file, counted per url and cause: `url → cause → count`. The causes the writer sees are
 * its `DropReason`s (`queueDepth`, `queueMemory`, `schemaConflict`, `limit`, `storageError`, `plugin`, `closed`,
 * `emptyUrl`, `invalidFrame`); the table takes any other cause name too, so causes only an application knows can join
 * it. A backend stores the table in the file (`BackendWriter.setCounters`: `.vcap` a `VLinkBagCounters` metadata
 * record, `.vdb` a `VLinkBagCounters` table; format reference §2.13, §5.5) and readers return it as `Info.counters`.
 */
export type CounterTable = Record<string, Record<string, number>>;

export class DropCounters {
  private readonly byUrl = new Map<string, Map<string, number>>();
  private sum = 0;

  add(url: string, cause: string, n = 1): void {
    if (!(n > 0)) return;
    // Under the url as the file can store it: a url with a lone surrogate (refused, `checkStorableNames`) is stored
    // with U+FFFD, and a split recording's manifest and segment must agree on the key.
    const key = storableName(url);
    let causes = this.byUrl.get(key);
    if (!causes) this.byUrl.set(key, (causes = new Map()));
    causes.set(cause, (causes.get(cause) ?? 0) + n);
    this.sum += n;
  }

  /** Adds every count of `table`. */
  merge(table: CounterTable): void {
    for (const [url, causes] of Object.entries(table))
      for (const [cause, n] of Object.entries(causes)) this.add(url, cause, n);
  }

  /** All counts together. */
  total(): number {
    return this.sum;
  }

  /** A plain snapshot, urls and causes sorted (what is stored and shown). */
  table(): CounterTable {
    const out: CounterTable = {};
    for (const url of [...this.byUrl.keys()].sort()) {
      const causes = this.byUrl.get(url)!;
      out[url] = Object.fromEntries([...causes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return out;
  }
}

/** The sum of several tables (e.g. what the producer and the writer thread each counted). */
export function mergeCounterTables(...tables: CounterTable[]): CounterTable {
  const c = new DropCounters();
  for (const t of tables) c.merge(t);
  return c.table();
}

/**
 * A table read back from a file, with anything that is not a url → cause → non-negative integer map left out (a
 * damaged record must not make up counts).
 */
export function sanitizeCounterTable(value: unknown): CounterTable {
  const c = new DropCounters();
  if (typeof value !== 'object' || value === null) return c.table();
  for (const [url, causes] of Object.entries(value as Record<string, unknown>)) {
    if (typeof causes !== 'object' || causes === null) continue;
    for (const [cause, n] of Object.entries(causes as Record<string, unknown>))
      if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) c.add(url, cause, n);
  }
  return c.table();
}
