import type { Info } from '@vlink/bag';
import { printWarnings } from './output.js';

/** What `-u/--urls` (whitelist), `-i/--filter` (keywords) and `-k/--skip-urls` (blacklist) select from a bag's urls. */
export interface UrlSelection {
  /** Urls to pass as `filterUrls`; undefined = every url. */
  filterUrls: string[] | undefined;
  /** True when the filters leave no url at all (the caller then reads nothing). */
  none: boolean;
  /** One warning per filter value that matches nothing in the bag (`-u`/`-k` urls, `-i` keywords). */
  warnings: string[];
}

export interface UrlFilters {
  urls?: readonly string[] | undefined;
  skipUrls?: readonly string[] | undefined;
  filter?: readonly string[] | undefined;
}

/** The distinct urls of a bag, in the bag's own order (`.vcap` lists a url once per action). */
export function bagUrls(info: Info): string[] {
  return [...new Set(info.urls.map((meta) => meta.url))];
}

/**
 * Exact-match whitelist, keyword whitelist (a url is kept when it contains one keyword), then blacklist, over
 * `available` urls (as VLink's `-u`, `-i` and blacklist mode do). Every value that matches nothing is reported.
 */
export function selectUrls(available: readonly string[], filters: UrlFilters): UrlSelection {
  const known = new Set(available);
  const wanted = filters.urls && filters.urls.length > 0 ? filters.urls : undefined;
  const keywords = filters.filter && filters.filter.length > 0 ? filters.filter : undefined;
  const skipped = new Set(filters.skipUrls ?? []);
  const warnings = [
    ...(wanted ?? []).filter((url) => !known.has(url)).map((url) => `no url ${url} in this bag (-u)`),
    ...[...skipped].filter((url) => !known.has(url)).map((url) => `no url ${url} in this bag (-k)`),
    ...(keywords ?? [])
      .filter((word) => !available.some((url) => url.includes(word)))
      .map((word) => `no url contains "${word}" (-i)`),
  ];
  if (!wanted && !keywords && skipped.size === 0) return { filterUrls: undefined, none: false, warnings };
  let base = wanted ? wanted.filter((url) => known.has(url)) : [...available];
  if (keywords) base = base.filter((url) => keywords.some((word) => url.includes(word)));
  const filterUrls = [...new Set(base.filter((url) => !skipped.has(url)))];
  return { filterUrls, none: filterUrls.length === 0, warnings };
}

/** Prints the selection's warnings on stderr as `vlink-bag <verb>: <file>: warning: …` unless quiet. */
export function warnSelection(verb: string, file: string, selection: UrlSelection, quiet: boolean | undefined): void {
  printWarnings(verb, file, selection.warnings, quiet);
}

/** A frame filter for sources that are not bags (stdin, a WebSocket): same whitelist/keyword/blacklist semantics. */
export function urlPredicate(filters: UrlFilters): (url: string) => boolean {
  const wanted = filters.urls && filters.urls.length > 0 ? new Set(filters.urls) : undefined;
  const keywords = filters.filter && filters.filter.length > 0 ? filters.filter : undefined;
  const skipped = new Set(filters.skipUrls ?? []);
  return (url) =>
    (!wanted || wanted.has(url)) && (!keywords || keywords.some((word) => url.includes(word))) && !skipped.has(url);
}
