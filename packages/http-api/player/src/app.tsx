import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getJson, type BagSummary, type Gap, type Report, type Timing } from './api.js';
import { AppHeader } from './components/app-header.js';
import { BagInfo } from './components/bag-info.js';
import { BagList } from './components/bag-list.js';
import { Controls } from './components/controls.js';
import { GapList, gapRows } from './components/gap-list.js';
import { Inspector } from './components/inspector.js';
import { ReportPanel } from './components/report-panel.js';
import { UrlTable, urlRows } from './components/url-table.js';
import { useApiAccess } from './hooks/use-api-access.js';
import { useBagJson } from './hooks/use-bag-json.js';
import { useDensity } from './hooks/use-density.js';
import { useHashBag } from './hooks/use-hash-bag.js';
import { useOpenBag } from './hooks/use-open-bag.js';
import { usePlayback } from './hooks/use-playback.js';
import { useShortcuts } from './shortcuts.js';
import type { Clock, TimeMode } from './time-format.js';
import { Timeline } from './timeline/timeline.js';
import type { TimelineView } from './timeline/timeline-view.js';

// Same default as core's DEFAULT_GAP_FACTOR (the page does not bundle core): one lost message at 10 Hz is a gap.
const DEFAULT_GAP_FACTOR = 1.5;

export function App() {
  const access = useApiAccess();
  const { auth, onApiError } = access;
  const [bagId, open] = useHashBag(() => access.changeToken());
  const { info, infoError, decoder, client, snap } = useOpenBag(bagId, access);
  const density = useDensity(bagId, info, access);
  const [factor, setFactor] = useState(DEFAULT_GAP_FACTOR);
  // Gaps (a full pass on the server, like the density; kept apart so a new factor does not reopen the bag) and the
  // validation report (interval histograms, publish-time offsets, counters): one more pass, once per bag.
  const timing = useBagJson<Timing>(bagId, `timing?factor=${factor}`, access);
  const report = useBagJson<Report>(bagId, 'report', access);
  const [timeMode, setTimeMode] = useState<TimeMode>('relative');
  const [inspectUrl, setInspectUrl] = useState<string>();
  useEffect(() => setInspectUrl(undefined), [bagId, auth]);
  useEffect(() => {
    if (info) setInspectUrl(info.urls[0]?.url);
  }, [info]);
  const timeline = useRef<TimelineView | undefined>(undefined);

  // The bag list.
  const [bags, setBags] = useState<BagSummary[]>();
  const [bagsError, setBagsError] = useState<string>();
  const [listVersion, setListVersion] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setBagsError(undefined);
    getJson<{ bags: BagSummary[] }>('/v1/bags', abort.signal).then(
      (r) => {
        access.authorized();
        setBags(r.bags);
      },
      (e) => onApiError(e, setBagsError),
    );
    return () => abort.abort();
  }, [listVersion, auth]);

  const rows = useMemo(() => (info ? urlRows(info, timing.data) : []), [info, timing.data]);
  const lanes = useMemo(() => rows.map((r) => r.url), [rows]);
  const gaps = useMemo(() => gapRows(timing.data), [timing.data]);
  // Gaps are found per url and action; a url's lane shows those of all its streams.
  const gapsByUrl = useMemo(() => {
    const byUrl = new Map<string, Gap[]>();
    for (const u of timing.data?.urls ?? []) byUrl.set(u.url, [...(byUrl.get(u.url) ?? []), ...u.gaps]);
    return byUrl;
  }, [timing.data]);
  const playback = usePlayback({ bagId, auth, info, client, snap, lanes, timeline });
  const { state, position, actions, rangeBeginMs, excluded } = playback;
  const clock: Clock = useMemo(
    () => ({ mode: timeMode, startMs: info?.startTimestamp ?? 0, timezone: info?.timezone ?? 0 }),
    [timeMode, info],
  );
  const timelineData = useMemo(
    () => ({
      durationMs: info?.totalDuration ?? 0,
      lanes,
      overview: density.overview,
      detail: density.detail,
      gaps: gapsByUrl,
      excluded,
      selected: inspectUrl,
      rangeBeginMs,
      clock,
    }),
    [info, lanes, density.overview, density.detail, gapsByUrl, excluded, inspectUrl, rangeBeginMs, clock],
  );

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
    l: () => actions.loop(!playback.loop),
  });

  return (
    <div class="app">
      <AppHeader path={info?.path} needToken={access.needToken} onToken={(value) => access.changeToken(value)} />
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
              rate={playback.rate}
              loop={playback.loop}
              skipBlank={playback.skipBlank}
              canPlay={playback.canPlay}
              dropped={snap?.dropped ?? 0}
              error={snap?.lastError}
              onPlayPause={actions.playPause}
              onStep={actions.step}
              onStop={actions.stop}
              onSeek={actions.seek}
              onRate={actions.rate}
              onLoop={actions.loop}
              onSkipBlank={actions.skipBlank}
              onTimeMode={setTimeMode}
              onZoom={actions.zoom}
            />
            <div class="timeline-wrap">
              {density.error ? <p class="error small">Density: {density.error}</p> : null}
              {!density.overview && !density.error ? (
                <p class="muted small loading">Counting messages per time bucket…</p>
              ) : null}
              <Timeline
                data={timelineData}
                position={position}
                callbacks={{ seek: actions.seek, select: setInspectUrl, view: density.onView }}
                onReady={(v) => (timeline.current = v)}
              />
            </div>
            <div class="panels">
              <UrlTable
                rows={rows}
                mode={playback.mode}
                chosen={playback.chosen}
                selected={inspectUrl}
                onMode={(m) => actions.filter(m, playback.chosen)}
                onToggle={actions.toggleUrl}
                onSelect={setInspectUrl}
              />
              <GapList
                rows={gaps}
                loading={!timing.data && !timing.error}
                error={timing.error}
                factor={factor}
                clock={clock}
                onFactor={setFactor}
                onShow={actions.showGap}
              />
              <ReportPanel report={report.data} loading={!report.data && !report.error} error={report.error} />
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
