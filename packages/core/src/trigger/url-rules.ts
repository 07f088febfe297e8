import type { TriggerConfig, TriggerParams, UrlConfig } from './trigger-config.js';

/** A url's effective windows and limits after `UrlConfig` overrides (format reference §9.3). */
export interface UrlRule {
  enabled: boolean;
  preMs: number;
  postMs: number;
  /** 0 = unlimited. */
  maxPacketSize: number;
  /** 0 = unlimited. */
  maxSize: number;
}

const pick = (override: number | undefined, fallback: number) =>
  override !== undefined && override >= 0 ? override : fallback;

export function urlRule(config: TriggerConfig, url: string): UrlRule {
  const o: Partial<UrlConfig> = config.urlOverrides[url] ?? {};
  const listed = config.whitelist.length === 0 || config.whitelist.includes(url);
  return {
    enabled: listed && !config.blacklist.includes(url) && !(o.onlyFront && o.onlyBack),
    preMs: o.onlyBack ? 0 : pick(o.preMs, config.defaultPreMs),
    postMs: o.onlyFront ? 0 : pick(o.postMs, config.defaultPostMs),
    maxPacketSize: pick(o.maxPacketSize, config.defaultMaxPacketSize),
    maxSize: pick(o.maxSize, config.defaultMaxSize),
  };
}

/** A trigger's window for one url: the trigger's value shrinks the url's when given (≥ 0), else the url's is used. */
export function triggerWindow(rule: UrlRule, params: TriggerParams): { preMs: number; postMs: number } {
  const pre = params.preMs !== undefined && params.preMs >= 0 ? Math.min(params.preMs, rule.preMs) : rule.preMs;
  const post = params.postMs !== undefined && params.postMs >= 0 ? Math.min(params.postMs, rule.postMs) : rule.postMs;
  return { preMs: pre, postMs: post };
}

/** Freezes the urls taking part in a dump: enabled, then the trigger's whitelist, blacklist and `filterStr`. */
export function selectUrls(urls: Iterable<string>, ruleOf: (url: string) => UrlRule, params: TriggerParams): string[] {
  const white = params.whitelist && params.whitelist.length > 0 ? new Set(params.whitelist) : undefined;
  const black = new Set(params.blacklist ?? []);
  const needles = (params.filterStr ?? '')
    .split(/[\s,]+/)
    .map((s) => s.toLowerCase())
    .filter((s) => s.length > 0);
  const selected: string[] = [];
  for (const url of urls) {
    if (!ruleOf(url).enabled) continue;
    if (white && !white.has(url)) continue;
    if (black.has(url)) continue;
    if (needles.length > 0) {
      const lower = url.toLowerCase();
      const matches = needles.some((n) => lower.includes(n));
      if (matches === Boolean(params.blackMode)) continue;
    }
    selected.push(url);
  }
  return selected;
}
