import type { Info } from '@vlink/bag';

/** What `-u/--urls` (whitelist) and `-k/--skip-urls` (blacklist) select from the urls a bag has. */
export interface UrlSelection {
  /** Urls to pass as `filterUrls`; undefined = every url. */
  filterUrls: string[] | undefined;
  /** True when the filters leave no url at all (the caller then reads nothing). */
  none: boolean;
  /** `-u` urls the bag does not have (reported as a warning). */
  unknown: string[];
}

/** The distinct urls of a bag, in the bag's own order (`.vcap` lists a url once per action). */
export function bagUrls(info: Info): string[] {
  return [...new Set(info.urls.map((meta) => meta.url))];
}

/** Exact-match whitelist, then blacklist, over `available` urls (as VLink's `-u` and blacklist mode do). */
export function selectUrls(
  available: readonly string[],
  urls?: readonly string[],
  skip?: readonly string[],
): UrlSelection {
  const known = new Set(available);
  const wanted = urls && urls.length > 0 ? urls : undefined;
  const skipped = new Set(skip ?? []);
  const unknown = wanted ? wanted.filter((url) => !known.has(url)) : [];
  if (!wanted && skipped.size === 0) return { filterUrls: undefined, none: false, unknown };
  const base = wanted ? wanted.filter((url) => known.has(url)) : [...available];
  const filterUrls = [...new Set(base.filter((url) => !skipped.has(url)))];
  return { filterUrls, none: filterUrls.length === 0, unknown };
}

/** A frame filter for sources that are not bags (stdin, a WebSocket): same whitelist/blacklist semantics. */
export function urlPredicate(urls?: readonly string[], skip?: readonly string[]): (url: string) => boolean {
  const wanted = urls && urls.length > 0 ? new Set(urls) : undefined;
  const skipped = new Set(skip ?? []);
  return (url) => (!wanted || wanted.has(url)) && !skipped.has(url);
}
