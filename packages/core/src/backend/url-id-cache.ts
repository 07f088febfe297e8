/**
 * A backend's per-url state found by the url id `BackendWriter.write` receives: arrays indexed by the id, filled
 * from the backend's own by-url lookup the first time an id is seen, so later frames of that url cost two array
 * reads and a compare of the url (the same string object frame after frame, so no hashing). The by-url lookup stays
 * the source of truth: an id that does not name the cached url (a caller outside the writer engine that got the ids
 * wrong) takes the lookup instead, so a wrong id costs time, never another url's state. `clear` forgets the cache
 * when the backend drops state (a rolled-back transaction).
 */
export class UrlIdCache<T> {
  private urls: Array<string | undefined> = [];
  private values: Array<T | undefined> = [];

  constructor(private readonly byUrl: (url: string) => T | undefined) {}

  /** The state of `url` (whose id is `urlId`), undefined while the backend has none. */
  get(urlId: number, url: string): T | undefined {
    if (this.urls[urlId] === url) return this.values[urlId];
    const found = this.byUrl(url);
    // Only array indexes are cached: any other number would turn the arrays into slow dictionaries.
    if (found !== undefined && Number.isInteger(urlId) && urlId >= 0) {
      this.urls[urlId] = url;
      this.values[urlId] = found;
    }
    return found;
  }

  clear(): void {
    this.urls = [];
    this.values = [];
  }
}
