/**
 * The url ids of a same-thread recording (`LocalEngine`): each url gets the next integer the first time it is
 * written, and keeps it for the whole recording, so backends can index their per-url state by it
 * (`BackendWriter.write`). Worker writers need none of this: their frames already carry the interned id of their url
 * (`url-entries.ts`).
 *
 * One map lookup per frame and no last-url shortcut: on a `syncMode` `.vcap` push loop (hand-measured, Node, against
 * the by-url backends before ids) comparing with the last url first cost more than it saved. Producers that interleave
 * urls pay a full string compare (same length, same prefix: `dds://camera/0` vs `dds://camera/1`) before the lookup
 * on every frame, 3–10 % more CPU per frame with 4 urls; with the map alone both 1 and 4 urls stayed within noise.
 */
export class UrlIds {
  private readonly ids = new Map<string, number>();

  /** The id of `url`, assigned now when the url is new. */
  of(url: string): number {
    const id = this.ids.get(url);
    return id !== undefined ? id : this.enter(url);
  }

  private enter(url: string): number {
    const id = this.ids.size;
    this.ids.set(url, id);
    return id;
  }
}
