import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  bagPath,
  getJson,
  setToken,
  token,
  type BagSummary,
  type Density,
  type Gap,
  type Info,
  type Report,
  type SchemaJson,
  type Timing,
} from './api.js';
import { BagInfo } from './components/bag-info.js';
import { BagList } from './components/bag-list.js';
import { Controls } from './components/controls.js';
import { GapList, gapRows, type GapRow } from './components/gap-list.js';
import { Inspector } from './components/inspector.js';
import { ReportPanel } from './components/report-panel.js';
import { UrlTable, urlRows, type FilterMode } from './components/url-table.js';
import { InspectorDecoder } from './decode.js';
import { ReplayClient, type PlayOptions, type ReplaySnapshot } from './replay-client.js';
import type { Clock, TimeMode } from './time-format.js';
import { Timeline } from './timeline/timeline.js';
import type { TimelineView } from './timeline/timeline-view.js';
import { useShortcuts } from './shortcuts.js';

/** Buckets of the whole-recording density: fixed, so the server's cache serves every page that opens the bag. */
const OVERVIEW_BUCKETS = 1000;
const DETAIL_DEBOUNCE_MS = 150;
// Same default as core's DEFAULT_GAP_FACTOR (the page does not bundle core): one lost message at 10 Hz is a gap.
const DEFAULT_GAP_FACTOR = 1.5;

const message = (error: unknown) =>
  error instanceof ApiError ? `${error.code}: ${error.message}` : (error as Error).message;
const isAbort = (error: unknown) => (error as Error)?.name === 'AbortError';

function hashParams(): URLSearchParams {
  return new URLSearchParams(location.hash.slice(1));
}

/** `#token=…` is taken once into sessionStorage and removed from the address bar; `#bag=<id>` names the open bag. */
function initialBag(): string | undefined {
  const params = hashParams();
  const t = params.get('token');
  if (t) {
    setToken(t);
    params.delete('token');
    history.replaceState(null, '', params.size > 0 ? `#${params.toString()}` : location.pathname);
  }
  return params.get('bag') ?? undefined;
}

export function App() {
  const [bagId, setBagId] = useState<string | undefined>(initialBag);
  const [auth, setAuth] = useState(0);
  const [needToken, setNeedToken] = useState(false);
  const [bags, setBags] = useState<BagSummary[]>();
  const [bagsError, setBagsError] = useState<string>();
  const [info, setInfo] = useState<Info>();
  const [infoError, setInfoError] = useState<string>();
  const [timing, setTiming] = useState<Timing>();
  const [timingError, setTimingError] = useState<string>();
  const [factor, setFactor] = useState(DEFAULT_GAP_FACTOR);
  const [report, setReport] = useState<Report>();
  const [reportError, setReportError] = useState<string>();
  const [overview, setOverview] = useState<Density>();
  const [detail, setDetail] = useState<Density>();
  const [densityError, setDensityError] = useState<string>();
  const [decoder, setDecoder] = useState<InspectorDecoder>();
  const [client, setClient] = useState<ReplayClient>();
  const [snap, setSnap] = useState<ReplaySnapshot>();
  const [rate, setRate] = useState(1);
  const [loop, setLoop] = useState(false);
  const [skipBlank, setSkipBlank] = useState(false);
  const [mode, setMode] = useState<FilterMode>('all');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [timeMode, setTimeMode] = useState<TimeMode>('relative');
  const [inspectUrl, setInspectUrl] = useState<string>();
  const timeline = useRef<TimelineView | undefined>(undefined);
  const detailFetch = useRef<{ timer?: ReturnType<typeof setTimeout>; abort?: AbortController; want?: string }>({});

  // A link to `#bag=…` (or `#token=…`) followed inside the page.
  useEffect(() => {
    const onHash = () => {
      const hadToken = hashParams().has('token');
      const id = initialBag();
      if (hadToken) {
        setNeedToken(false);
        setAuth((n) => n + 1);
      }
      if (id) setBagId(id);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const onApiError = useCallback((error: unknown, set: (text: string) => void) => {
    if (isAbort(error)) return;
    if (error instanceof ApiError && error.status === 401) setNeedToken(true);
    set(message(error));
  }, []);

  // The bag list.
  const [listVersion, setListVersion] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setBagsError(undefined);
    getJson<{ bags: BagSummary[] }>('/v1/bags', abort.signal).then(
      (r) => {
        setNeedToken(false);
        setBags(r.bags);
      },
      (e) => onApiError(e, setBagsError),
    );
    return () => abort.abort();
  }, [listVersion, auth]);

  // The open bag: info first (the replay needs its duration), then schemas, the overview density and the replay.
  useEffect(() => {
    setInfo(undefined);
    setInfoError(undefined);
    setOverview(undefined);
    setDetail(undefined);
    setDensityError(undefined);
    setDecoder(undefined);
    setSnap(undefined);
    setChosen(new Set());
    setInspectUrl(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    let replay: ReplayClient | undefined;
    const base = bagPath(bagId);
    const infoRequest = getJson<Info>(`${base}/info`, abort.signal);
    infoRequest.then(
      (i) => {
        if (abort.signal.aborted) return;
        setInfo(i);
        setInspectUrl(i.urls[0]?.url);
        replay = new ReplayClient(bagId, i.totalDuration);
        setClient(replay);
        setSnap(replay.current);
        replay.subscribe(setSnap);
      },
      (e) => onApiError(e, setInfoError),
    );
    // The decoder needs the urls' declared encodings (foreign bags) as well as the schemas.
    Promise.all([
      getJson<{ schemas: SchemaJson[] }>(`${base}/schemas`, abort.signal),
      infoRequest.catch(() => undefined),
    ]).then(
      ([r, i]) => setDecoder(new InspectorDecoder(r.schemas, i?.urls ?? [])),
      (e) => {
        if (!isAbort(e)) setDecoder(new InspectorDecoder([]));
      },
    );
    getJson<Density>(`${base}/density?buckets=${OVERVIEW_BUCKETS}`, abort.signal).then(setOverview, (e) =>
      onApiError(e, setDensityError),
    );
    return () => {
      abort.abort();
      replay?.close();
      setClient(undefined);
      const pending = detailFetch.current;
      clearTimeout(pending.timer);
      pending.abort?.abort();
      pending.want = undefined;
    };
  }, [bagId, auth]);

  // Gaps (a full pass on the server, like the density; kept separate so a new factor does not reopen the bag).
  useEffect(() => {
    setTiming(undefined);
    setTimingError(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    getJson<Timing>(`${bagPath(bagId)}/timing?factor=${factor}`, abort.signal).then(setTiming, (e) =>
      onApiError(e, setTimingError),
    );
    return () => abort.abort();
  }, [bagId, factor, auth]);

  // The validation report (interval histograms, publish-time offsets, counters): one more pass, once per bag.
  useEffect(() => {
    setReport(undefined);
    setReportError(undefined);
    if (!bagId) return;
    const abort = new AbortController();
    getJson<Report>(`${bagPath(bagId)}/report`, abort.signal).then(setReport, (e) => onApiError(e, setReportError));
    return () => abort.abort();
  }, [bagId, auth]);

  // The detail density around the visible window (one view each side, so small pans need nothing new), fetched once
  // zooming or panning pauses. A superseded request is aborted, which also stops its pass on the server.
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
          onApiError(e, setDensityError),
        );
      }, DETAIL_DEBOUNCE_MS);
    },
    [bagId, info],
  );

  const rows = useMemo(() => (info ? urlRows(info, timing) : []), [info, timing]);
  const lanes = useMemo(() => rows.map((r) => r.url), [rows]);
  const gaps = useMemo(() => gapRows(timing), [timing]);
  // Gaps are found per url and action; a url's lane shows those of all its streams.
  const gapsByUrl = useMemo(() => {
    const byUrl = new Map<string, Gap[]>();
    for (const u of timing?.urls ?? []) byUrl.set(u.url, [...(byUrl.get(u.url) ?? []), ...u.gaps]);
    return byUrl;
  }, [timing]);
  const playUrls = useMemo(() => {
    if (mode === 'all') return [];
    return mode === 'whitelist' ? lanes.filter((u) => chosen.has(u)) : lanes.filter((u) => !chosen.has(u));
  }, [mode, chosen, lanes]);
  const excluded = useMemo(
    () => new Set(mode === 'all' ? [] : lanes.filter((u) => !playUrls.includes(u))),
    [mode, lanes, playUrls],
  );
  const canPlay = mode === 'all' || playUrls.length > 0;
  const rangeBeginMs = skipBlank && info ? info.blankDuration : 0;
  const clock: Clock = useMemo(
    () => ({ mode: timeMode, startMs: info?.startTimestamp ?? 0, timezone: info?.timezone ?? 0 }),
    [timeMode, info],
  );
  const timelineData = useMemo(
    () => ({
      durationMs: info?.totalDuration ?? 0,
      lanes,
      overview,
      detail,
      gaps: gapsByUrl,
      excluded,
      selected: inspectUrl,
      rangeBeginMs,
      clock,
    }),
    [info, lanes, overview, detail, gapsByUrl, excluded, inspectUrl, rangeBeginMs, clock],
  );

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
  };

  const changeFilter = (nextMode: FilterMode, nextChosen: ReadonlySet<string>) => {
    setMode(nextMode);
    setChosen(nextChosen);
    const urls =
      nextMode === 'all'
        ? []
        : nextMode === 'whitelist'
          ? lanes.filter((u) => nextChosen.has(u))
          : lanes.filter((u) => !nextChosen.has(u));
    if (nextMode !== 'all' && urls.length === 0) {
      if (active) client?.stop();
      return;
    }
    actions.restart({ urls });
  };

  useShortcuts({
    ' ': actions.playPause,
    '.': actions.step,
    ArrowRight: (e) =>
      e.shiftKey
        ? actions.seek(Math.min(info?.totalDuration ?? 0, position() + 10_000))
        : state === 'playing'
          ? actions.seek(position() + 1000)
          : actions.step(),
    ArrowLeft: (e) => actions.seek(Math.max(0, position() - (e.shiftKey ? 10_000 : 1000))),
    '+': () => actions.zoom('in'),
    '=': () => actions.zoom('in'),
    '-': () => actions.zoom('out'),
    '0': () => actions.zoom('fit'),
    l: () => {
      setLoop(!loop);
      actions.restart({ loop: !loop });
    },
  });

  const open = (id: string) => {
    if (id === bagId) return;
    history.replaceState(null, '', `#bag=${encodeURIComponent(id)}`);
    setBagId(id);
  };

  return (
    <div class="app">
      <header>
        <h1>
          vlink-bag <span class="muted">player</span>
        </h1>
        {info ? <span class="mono current-bag">{info.path}</span> : null}
        <span class="spacer" />
        {needToken || token() ? (
          <form
            class="token"
            onSubmit={(e) => {
              e.preventDefault();
              const input = (e.currentTarget as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
              setToken(input.value.trim());
              setNeedToken(false);
              setAuth((n) => n + 1);
            }}
          >
            <label>
              Token{' '}
              <input
                name="token"
                type="password"
                autocomplete="off"
                placeholder={needToken ? 'required by this server' : '••••'}
              />
            </label>
            <button type="submit">Use</button>
          </form>
        ) : null}
        <a href="/v1/docs" target="_blank" rel="noreferrer">
          API docs
        </a>
      </header>
      <BagList
        bags={bags}
        error={bagsError}
        selected={bagId}
        onOpen={open}
        onReload={() => setListVersion((v) => v + 1)}
      />
      <main>
        {!bagId ? <p class="hint">Choose a bag on the left.</p> : null}
        {infoError ? (
          <p class="error">
            Cannot open {bagId}: {infoError}
          </p>
        ) : null}
        {bagId && !info && !infoError ? <p class="muted">Opening {bagId}…</p> : null}
        {info ? (
          <>
            <BagInfo info={info} />
            <Controls
              state={state}
              position={position}
              clock={clock}
              durationMs={info.totalDuration}
              rate={rate}
              loop={loop}
              skipBlank={skipBlank}
              canPlay={canPlay}
              dropped={snap?.dropped ?? 0}
              error={snap?.lastError}
              onPlayPause={actions.playPause}
              onStep={actions.step}
              onStop={actions.stop}
              onSeek={actions.seek}
              onRate={actions.rate}
              onLoop={(v) => {
                setLoop(v);
                actions.restart({ loop: v });
              }}
              onSkipBlank={(v) => {
                setSkipBlank(v);
                actions.restart({ beginMs: v ? info.blankDuration : 0 });
              }}
              onTimeMode={setTimeMode}
              onZoom={actions.zoom}
            />
            <div class="timeline-wrap">
              {densityError ? <p class="error small">Density: {densityError}</p> : null}
              {!overview && !densityError ? (
                <p class="muted small loading">Counting messages per time bucket…</p>
              ) : null}
              <Timeline
                data={timelineData}
                position={position}
                callbacks={{ seek: actions.seek, select: setInspectUrl, view: onView }}
                onReady={(v) => (timeline.current = v)}
              />
            </div>
            <div class="panels">
              <UrlTable
                rows={rows}
                mode={mode}
                chosen={chosen}
                selected={inspectUrl}
                onMode={(m) => changeFilter(m, chosen)}
                onToggle={(url) => {
                  const next = new Set(chosen);
                  if (!next.delete(url)) next.add(url);
                  changeFilter(mode, next);
                }}
                onSelect={setInspectUrl}
              />
              <GapList
                rows={gaps}
                loading={!timing && !timingError}
                error={timingError}
                factor={factor}
                clock={clock}
                onFactor={setFactor}
                onShow={actions.showGap}
              />
              <ReportPanel report={report} loading={!report && !reportError} error={reportError} />
              <Inspector
                urls={lanes}
                url={inspectUrl}
                frame={inspectUrl ? snap?.latest.get(inspectUrl) : undefined}
                received={snap?.received ?? 0}
                decoder={decoder}
                clock={clock}
                onUrl={setInspectUrl}
              />
            </div>
          </>
        ) : null}
      </main>
    </div>
  );
}
