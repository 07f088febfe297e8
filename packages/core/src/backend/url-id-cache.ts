/**
 * A backend's per-url state found by the url id `BackendWriter.write` receives: arrays indexed by the id, filled
 * from the backend's own by-url lookup the first time an id is seen, so later frames of that url cost two array
 * reads and a compare of the url (the same string object frame after frame, so no hashing). The by-url lookup stays
 * the source of truth: an id that does not name the cached url (a caller outside the writer engine that got the ids
 * wrong) takes the lookup instead, so a wrong id costs time, never another url's state. `clear` forgets the cache
 * when the backend drops state (a rolled-back transaction).
 *
 * Every file writer keeps its per-url state here: `.vdb` and the `.vcapx` split format through `get`, and the `.vcap`
 * file writer through `byId`, read inline (see there).
 */
export class UrlIdCache<T> {
  private readonly urls: Array<string | undefined> = [];
  private readonly values: Array<T | undefined> = [];
  /**
   * The cached state by url id, for a per-frame path whose state names its own url: it reads `byId[urlId]`, compares
   * that state's url with the frame's and calls `get` only when they differ. Calling `get` on every frame would add
   * this module to the files a `.vcap` frame passes through (`scripts/frame-path.mjs`, issue #27) and a call to each
   * frame's cost, for the same two reads. The same array for the cache's whole life (`clear` empties it in place), so
   * such a writer may keep it in a field of its own.
   */
  readonly byId: ReadonlyArray<T | undefined> = this.values;

  /** `byUrl` answers for a url the cache has not seen under this id; undefined (none yet) is never cached. */
  constructor(private readonly byUrl: (url: string) => T) {}

  /** The state of `url` (whose id is `urlId`), as `byUrl` gives it: undefined while the backend has none. */
  get(urlId: number, url: string): T {
    if (this.urls[urlId] === url) return this.values[urlId] as T;
    const found = this.byUrl(url);
    // Only array indexes are cached: any other number would turn the arrays into slow dictionaries.
    if (found !== undefined && Number.isInteger(urlId) && urlId >= 0) {
      this.urls[urlId] = url;
      this.values[urlId] = found;
    }
    return found;
  }

  clear(): void {
    // Emptied in place: `byId` is the same array.
    this.urls.length = 0;
    this.values.length = 0;
  }
}
