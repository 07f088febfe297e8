/**
 * The url ids of a same-thread recording (`LocalEngine`): each url gets the next integer the first time it is
 * written, and keeps it for the whole recording, so backends can index their per-url state by it
 * (`BackendWriter.write`). Worker writers need none of this: their frames already carry the interned id of their url
 * (`url-entries.ts`). Found per frame by one compare when the url is the last one (the same string object, so no
 * hashing: producers mostly push runs of one url), else by one map lookup.
 */
export class UrlIds {
  private readonly ids = new Map<string, number>();
  private lastUrl = '';
  private lastId = -1;

  /** The id of `url`, assigned now when the url is new. */
  of(url: string): number {
    if (url === this.lastUrl && this.lastId >= 0) return this.lastId;
    let id = this.ids.get(url);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(url, id);
    }
    this.lastUrl = url;
    this.lastId = id;
    return id;
  }
}
