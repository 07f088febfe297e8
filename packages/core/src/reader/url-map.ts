import type { CursorQuery } from '../backend/backend.js';
import type { Frame } from '../model/frame.js';
import type { UrlMeta } from '../model/info.js';
import type { SchemaType } from '../model/schema-type.js';
import { UrlRemapCache, type BagPluginInterface } from '../plugins/bag-plugin.js';

/**
 * A read plugin's url decisions for one bag (format reference §7.2–7.5): stored url → playback url (or dropped), and the
 * playback url's ser and family. Built once per bound plugin from the bag's url table, so `convertUrlMeta` runs once
 * per url and a frame costs one map lookup.
 */
export class ReadUrlMap {
  private readonly toPlay = new Map<string, string | null>();
  private readonly playMeta = new Map<string, { serType: string; schemaType: SchemaType }>();
  private readonly dropsAny: boolean;

  constructor(metas: readonly UrlMeta[], plugin: BagPluginInterface) {
    const cache = new UrlRemapCache(plugin);
    for (const meta of metas) {
      // `.vcap` lists a url once per action; the first entry decides, as the url maps are keyed by url.
      if (this.toPlay.has(meta.url)) continue;
      const mapped = cache.map(meta.url, meta.ser, meta.schemaType);
      this.toPlay.set(meta.url, mapped);
      // Two stored urls renamed to one playback url: the first one's ser and family describe it.
      if (mapped !== null && !this.playMeta.has(mapped))
        this.playMeta.set(mapped, { serType: meta.ser, schemaType: meta.schemaType });
    }
    this.dropsAny = [...this.toPlay.values()].includes(null);
  }

  /**
   * Translates a query on playback urls into one on stored urls, so the backend prefilters (`url IN (…)`) instead of
   * the reader skipping frames one by one.
   */
  storedQuery(query: CursorQuery): CursorQuery {
    const { urls: wanted, ...rest } = query;
    if (wanted === undefined && !this.dropsAny) return rest;
    const keep = wanted === undefined ? undefined : new Set(wanted);
    const urls: string[] = [];
    for (const [stored, play] of this.toPlay) if (play !== null && (!keep || keep.has(play))) urls.push(stored);
    return { ...rest, urls };
  }

  /** The frame as playback sees it, or undefined when its url is unknown or dropped. */
  map(frame: Frame): Frame | undefined {
    const play = this.toPlay.get(frame.url);
    if (play === undefined || play === null) return undefined;
    if (play === frame.url) return frame;
    const meta = this.playMeta.get(play)!;
    return { ...frame, url: play, serType: meta.serType, schemaType: meta.schemaType };
  }
}
