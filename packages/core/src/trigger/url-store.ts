import type { Frame } from '../model/frame.js';
import { TimeRing } from './time-ring.js';
import type { TriggerConfig } from './trigger-config.js';
import { urlRule, type UrlRule } from './url-rules.js';

/** Why ingested frames were not kept (format reference §9.1 drop rules, in the order they are checked). */
export interface TriggerDrops {
  notRunning: number;
  disabled: number;
  busy: number;
  packetSize: number;
  urlSize: number;
  cacheSize: number;
  /** A byte cap would be exceeded (`dropNewest`, or `coverOldest` could not make room). */
  overflow: number;
}

interface UrlState {
  readonly ring: TimeRing;
  readonly rule: UrlRule;
  /** Frames offered and frames dropped, for the per-dump loss ratio. */
  total: number;
  lost: number;
  totalAtDump: number;
  lostAtDump: number;
}

/**
 * The per-url rings with their byte caps, retention and counters (format reference §9.1). Each url keeps
 * `pre + maxPostAll + 2 × retentionGuard` of history, where `maxPostAll` is the largest post window of any known
 * enabled url, so a dump written `post + guard` after its trigger still finds its whole pre window.
 */
export class UrlStore {
  private readonly states = new Map<string, UrlState>();
  private readonly rules = new Map<string, UrlRule>();
  private maxPostMs = 0;
  private warnedCacheSize = false;
  bytes = 0;
  frames = 0;
  covered = 0;
  readonly drops: TriggerDrops = {
    notRunning: 0,
    disabled: 0,
    busy: 0,
    packetSize: 0,
    urlSize: 0,
    cacheSize: 0,
    overflow: 0,
  };

  constructor(
    private readonly config: TriggerConfig,
    /** Told once when a packet larger than the whole cache arrives (VLink logs a warning once). */
    private readonly warn: (message: string) => void,
  ) {}

  rule(url: string): UrlRule {
    let rule = this.rules.get(url);
    if (!rule) this.rules.set(url, (rule = urlRule(this.config, url)));
    return rule;
  }

  /** Urls seen so far, in first-seen order. */
  urls(): IterableIterator<string> {
    return this.states.keys();
  }

  ring(url: string): TimeRing | undefined {
    return this.states.get(url)?.ring;
  }

  /** Applies the drop rules and caps, then keeps a copy. False when the frame was dropped (counted). */
  add(frame: Frame, captureUs: number, nowUs: number, busy: boolean): boolean {
    const rule = this.rule(frame.url);
    if (!rule.enabled) {
      this.drops.disabled++;
      return false;
    }
    const state = this.state(frame.url, rule);
    state.total++;
    const size = frame.data.length;
    const reason = busy
      ? 'busy'
      : rule.maxPacketSize > 0 && size > rule.maxPacketSize
        ? 'packetSize'
        : rule.maxSize > 0 && size > rule.maxSize
          ? 'urlSize'
          : this.config.maxCacheSize > 0 && size > this.config.maxCacheSize
            ? 'cacheSize'
            : this.makeRoom(state, size)
              ? undefined
              : 'overflow';
    if (reason) {
      if (reason === 'cacheSize' && !this.warnedCacheSize) {
        this.warnedCacheSize = true;
        this.warn(`a ${size}-byte packet on ${frame.url} is larger than maxCacheSize; such packets are dropped`);
      }
      this.drops[reason]++;
      state.lost++;
      return false;
    }
    state.ring.push({ captureUs, frame: { ...frame, data: frame.data.slice() } });
    this.bytes += size;
    this.frames++;
    this.expire(state, nowUs);
    return true;
  }

  /** The periodic sweep: expires every ring. */
  expireAll(nowUs: number): void {
    for (const state of this.states.values()) this.expire(state, nowUs);
  }

  /** Loss ratio since the previous dump (`Δlost / Δtotal`, 0 without traffic), and marks this dump. */
  lossSinceLastDump(url: string): number {
    const state = this.states.get(url);
    if (!state) return 0;
    const total = state.total - state.totalAtDump;
    const lost = state.lost - state.lostAtDump;
    state.totalAtDump = state.total;
    state.lostAtDump = state.lost;
    return total > 0 ? lost / total : 0;
  }

  clear(): void {
    for (const state of this.states.values()) state.ring.clear();
    this.bytes = 0;
    this.frames = 0;
  }

  private state(url: string, rule: UrlRule): UrlState {
    let state = this.states.get(url);
    if (!state) {
      state = { ring: new TimeRing(), rule, total: 0, lost: 0, totalAtDump: 0, lostAtDump: 0 };
      this.states.set(url, state);
      this.maxPostMs = Math.max(this.maxPostMs, rule.postMs);
    }
    return state;
  }

  /** Whether `size` more bytes fit the url's and the global cap, evicting this url's oldest under `coverOldest`. */
  private makeRoom(state: UrlState, size: number): boolean {
    const { maxSize } = state.rule;
    const overUrl = () => maxSize > 0 && state.ring.bytes + size > maxSize;
    const overAll = () => this.config.maxCacheSize > 0 && this.bytes + size > this.config.maxCacheSize;
    if (!overUrl() && !overAll()) return true;
    if (this.config.overflow === 'dropNewest') return false;
    while ((overUrl() || overAll()) && state.ring.size > 0) {
      this.bytes -= state.ring.dropOldest();
      this.frames--;
      this.covered++;
    }
    return !overUrl() && !overAll();
  }

  private expire(state: UrlState, nowUs: number): void {
    const keepUs = (state.rule.preMs + this.maxPostMs + 2 * this.config.retentionGuardMs) * 1000;
    const before = state.ring.size;
    this.bytes -= state.ring.expire(nowUs - keepUs);
    this.frames -= before - state.ring.size;
  }
}
