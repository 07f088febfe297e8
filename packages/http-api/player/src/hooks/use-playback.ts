import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import type { Info } from '../api.js';
import type { GapRow } from '../components/gap-list.js';
import type { FilterMode } from '../components/url-table.js';
import type { PlayOptions, ReplayClient, ReplaySnapshot } from '../replay-client.js';
import type { TimelineView } from '../timeline/timeline-view.js';

export interface PlaybackInput {
  bagId: string | undefined;
  auth: number;
  info: Info | undefined;
  client: ReplayClient | undefined;
  snap: ReplaySnapshot | undefined;
  /** The bag's urls, in the timeline's order. */
  lanes: readonly string[];
  timeline: { readonly current: TimelineView | undefined };
}

/** The urls a filter plays: all (none named), the chosen ones (whitelist), or all but them (blacklist). */
function urlsPlayed(mode: FilterMode, chosen: ReadonlySet<string>, lanes: readonly string[]): string[] {
  if (mode === 'all') return [];
  return mode === 'whitelist' ? lanes.filter((u) => chosen.has(u)) : lanes.filter((u) => !chosen.has(u));
}

/**
 * What the user steers: the replay's options (rate, loop, skip blank, the url filter) and the actions of the buttons,
 * keys and timeline (play/pause, step, stop, seek, zoom, show a gap). Options that only a new pass can change start
 * one at the cursor, in the same state.
 */
export function usePlayback({ bagId, auth, info, client, snap, lanes, timeline }: PlaybackInput) {
  const [rate, setRate] = useState(1);
  const [loop, setLoop] = useState(false);
  const [skipBlank, setSkipBlank] = useState(false);
  const [mode, setMode] = useState<FilterMode>('all');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => setChosen(new Set()), [bagId, auth]);

  const playUrls = useMemo(() => urlsPlayed(mode, chosen, lanes), [mode, chosen, lanes]);
  const excluded = useMemo(
    () => new Set(mode === 'all' ? [] : lanes.filter((u) => !playUrls.includes(u))),
    [mode, lanes, playUrls],
  );
  const canPlay = mode === 'all' || playUrls.length > 0;
  const rangeBeginMs = skipBlank && info ? info.blankDuration : 0;

  const state = snap?.state ?? 'connecting';
  const position = useCallback(() => client?.position() ?? 0, [client]);
  const options = (overrides: Partial<PlayOptions> = {}): PlayOptions => ({
    rate,
    beginMs: rangeBeginMs,
    endMs: 0,
    urls: playUrls,
    loop,
    ...overrides,
  });
  /** Where a new pass starts: the cursor, or the window start once a pass has run to its end. */
  const startAt = (opts: PlayOptions) => {
    const at = position();
    return snap?.finished || (info && at >= info.totalDuration) ? opts.beginMs : Math.max(opts.beginMs, at);
  };
  const active = state === 'playing' || state === 'paused';

  const actions = {
    playPause() {
      if (!client || !canPlay) return;
      if (state === 'playing') client.pause();
      else if (state === 'paused') client.resume();
      else if (state === 'stopped') {
        const opts = options();
        client.play(opts, startAt(opts), false);
      }
    },
    step() {
      if (!client || !canPlay) return;
      const opts = options();
      client.step(() => client.play(opts, startAt(opts), true));
    },
    stop() {
      client?.stop();
    },
    seek(ms: number) {
      if (!client) return;
      if (active) client.seek(ms);
      else if (canPlay) client.play(options(), ms, true);
    },
    rate(r: number) {
      setRate(r);
      if (client && active) client.setRate(r);
    },
    /** Options that only a new pass can change (window, urls, loop): start one at the cursor, in the same state. */
    restart(overrides: Partial<PlayOptions>) {
      if (!client || !active) return;
      const opts = options(overrides);
      if (opts.urls.length === 0 && mode !== 'all' && !overrides.urls) return client.stop();
      client.play(opts, Math.max(opts.beginMs, position()), state === 'paused');
    },
    loop(on: boolean) {
      setLoop(on);
      actions.restart({ loop: on });
    },
    skipBlank(on: boolean) {
      setSkipBlank(on);
      actions.restart({ beginMs: on && info ? info.blankDuration : 0 });
    },
    zoom(how: 'in' | 'out' | 'fit') {
      const v = timeline.current;
      if (!v) return;
      if (how === 'fit') v.fit();
      else v.zoom(how === 'in' ? 0.5 : 2, active ? position() : undefined);
    },
    showGap(g: GapRow) {
      const pad = Math.max(g.lengthMs * 0.6, 20);
      timeline.current?.setView(g.startMs - pad, g.startMs + g.lengthMs + pad);
      actions.seek(g.startMs);
    },
    /** A new url filter: plays the urls it leaves, or stops when it leaves none. */
    filter(nextMode: FilterMode, nextChosen: ReadonlySet<string>) {
      setMode(nextMode);
      setChosen(nextChosen);
      const urls = urlsPlayed(nextMode, nextChosen, lanes);
      if (nextMode !== 'all' && urls.length === 0) {
        if (active) client?.stop();
        return;
      }
      actions.restart({ urls });
    },
    toggleUrl(url: string) {
      const next = new Set(chosen);
      if (!next.delete(url)) next.add(url);
      actions.filter(mode, next);
    },
  };

  return { state, position, rate, loop, skipBlank, mode, chosen, excluded, canPlay, rangeBeginMs, actions };
}
