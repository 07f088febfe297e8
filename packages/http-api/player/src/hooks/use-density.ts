import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { bagPath, getJson, type Density, type Info } from '../api.js';
import type { ApiAccess } from './use-api-access.js';

/** Buckets of the whole-recording density: fixed, so the server's cache serves every page that opens the bag. */
const OVERVIEW_BUCKETS = 1000;
const DETAIL_DEBOUNCE_MS = 150;

export interface DensityState {
  /** The whole recording, fetched when the bag opens. */
  overview: Density | undefined;
  /** Finer counts around the visible window, once the view is zoomed in. */
  detail: Density | undefined;
  error: string | undefined;
  /** The timeline's view changed (ms window, width in px). */
  onView(beginMs: number, endMs: number, px: number): void;
}

/**
 * The timeline's message counts per time bucket: the overview once per bag, and the detail density around the visible
 * window (one view each side, so small pans need nothing new), fetched once zooming or panning pauses. A superseded
 * request is aborted, which also stops its pass on the server.
 */
export function useDensity(bagId: string | undefined, info: Info | undefined, access: ApiAccess): DensityState {
  const [overview, setOverview] = useState<Density>();
  const [detail, setDetail] = useState<Density>();
  const [error, setError] = useState<string>();
  const detailFetch = useRef<{ timer?: ReturnType<typeof setTimeout>; abort?: AbortController; want?: string }>({});
  const { auth, onApiError } = access;

  useEffect(() => {
    setOverview(undefined);
    setDetail(undefined);
    setError(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    getJson<Density>(`${bagPath(bagId)}/density?buckets=${OVERVIEW_BUCKETS}`, abort.signal).then(setOverview, (e) =>
      onApiError(e, setError),
    );
    return () => {
      abort.abort();
      const pending = detailFetch.current;
      clearTimeout(pending.timer);
      pending.abort?.abort();
      pending.want = undefined;
    };
  }, [bagId, auth]);

  const detailNow = useRef<Density | undefined>(undefined);
  detailNow.current = detail;
  const onView = useCallback(
    (beginMs: number, endMs: number, px: number) => {
      const pending = detailFetch.current;
      clearTimeout(pending.timer);
      if (!bagId || !info) return;
      const span = Math.max(endMs - beginMs, 1e-3);
      if (span >= info.totalDuration * 0.98 && px <= OVERVIEW_BUCKETS * 1.5) {
        pending.abort?.abort();
        pending.want = undefined;
        setDetail(undefined);
        return;
      }
      const d = detailNow.current;
      if (
        d &&
        d.beginMs <= beginMs &&
        d.endMs >= endMs &&
        d.bucketMs <= (span / px) * 1.5 &&
        d.endMs - d.beginMs <= span * 4
      )
        return;
      pending.timer = setTimeout(() => {
        const from = Math.max(0, beginMs - span);
        const to = Math.min(info.totalDuration, endMs + span);
        const buckets = Math.max(50, Math.min(5000, Math.round((px * (to - from)) / span)));
        const query = `buckets=${buckets}&begin=${from.toFixed(3)}&end=${to.toFixed(3)}`;
        if (query === pending.want) return;
        pending.abort?.abort();
        const abort = new AbortController();
        pending.abort = abort;
        pending.want = query;
        getJson<Density>(`${bagPath(bagId)}/density?${query}`, abort.signal).then(setDetail, (e) =>
          onApiError(e, setError),
        );
      }, DETAIL_DEBOUNCE_MS);
    },
    [bagId, info],
  );

  return { overview, detail, error, onView };
}
