import type { Histogram, Report } from '../api.js';

const BAR_W = 6;
const PLOT_H = 44;

/** A histogram as SVG bars (one per bin, plus a hatched `>` bar for values beyond the last edge); titles give counts. */
function HistogramPlot({ h, unit, label }: { h: Histogram; unit: (v: number) => string; label: string }) {
  const bars = [...h.counts, h.over];
  const top = Math.max(1, ...bars);
  const width = bars.length * BAR_W;
  return (
    <svg
      class="hist"
      width={width}
      height={PLOT_H}
      viewBox={`0 0 ${width} ${PLOT_H}`}
      role="img"
      aria-label={label}
      data-testid="histogram"
    >
      {bars.map((n, i) => {
        const height = n === 0 ? 0 : Math.max(1, (n / top) * (PLOT_H - 2));
        const over = i === h.counts.length;
        const range = over
          ? `> ${unit(h.edges[h.edges.length - 1]!)}`
          : `${unit(h.edges[i]!)} … ${unit(h.edges[i + 1]!)}`;
        return (
          <rect
            key={i}
            class={over ? 'bar over' : 'bar'}
            x={i * BAR_W}
            y={PLOT_H - height}
            width={BAR_W - 1}
            height={height}
            data-count={n}
          >
            <title>{`${range}: ${n}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}

const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)} ms`;

/** Counters by cause as horizontal bars, longest first, scaled to the largest. */
function CounterBars({ counters }: { counters: Report['counters'] }) {
  const rows = Object.entries(counters)
    .flatMap(([url, causes]) => Object.entries(causes).map(([cause, n]) => ({ url, cause, n })))
    .sort((a, b) => b.n - a.n || (a.url < b.url ? -1 : 1));
  if (rows.length === 0) return <p class="muted">No counters: nothing was dropped or counted.</p>;
  const top = Math.max(...rows.map((r) => r.n));
  return (
    <ul class="counter-bars" data-testid="counter-bars">
      {rows.map((r) => (
        <li key={`${r.url} ${r.cause}`} title={`${r.url}: ${r.cause} × ${r.n}`}>
          <span class="mono counter-label">
            <b>{r.cause}</b> <span class="muted">{r.url}</span>
          </span>
          <span class="counter-track">
            <span class="counter-bar" style={{ width: `${Math.max(2, (r.n / top) * 100)}%` }} data-count={r.n} />
          </span>
          <span class="num">{r.n}</span>
        </li>
      ))}
    </ul>
  );
}

export interface ReportPanelProps {
  report: Report | undefined;
  loading: boolean;
  error: string | undefined;
}

/**
 * The validation report (`/report`) as plots: per stream (url AND action) the interval histogram (0 … 3 × median),
 * rate and time semantics; per group of simultaneous urls the publish-time offset histogram; the counters by cause.
 */
export function ReportPanel({ report, loading, error }: ReportPanelProps) {
  return (
    <section class="panel report" aria-label="Report">
      <div class="panel-head">
        <h2>Report</h2>
      </div>
      {error ? <p class="error">{error}</p> : null}
      {loading ? <p class="muted">Measuring intervals…</p> : null}
      {report ? (
        <div class="scroll">
          <h3>Intervals</h3>
          <ul class="report-streams" data-testid="report-streams">
            {report.streams.map((s) => (
              <li key={`${s.url} ${s.action}`} data-url={s.url} data-action={s.action}>
                <div class="mono">
                  {s.url} {s.action !== 'Pub' ? s.action : ''}
                </div>
                <div class="muted small">
                  {s.rateHz.toFixed(1)} Hz · p50 {s.intervalUs ? ms(s.intervalUs.p50) : '–'} · {s.time} time
                  {s.latencyUs && s.time !== 'log' ? ` · latency p50 ${ms(s.latencyUs.p50)}` : ''}
                </div>
                {s.intervalHistogram ? (
                  <HistogramPlot h={s.intervalHistogram} unit={ms} label={`intervals of ${s.url} ${s.action}`} />
                ) : null}
              </li>
            ))}
          </ul>
          {report.groups.length > 0 ? <h3>Publish-time offsets</h3> : null}
          <ul class="report-groups" data-testid="report-groups">
            {report.groups.flatMap((g) =>
              g.members.map((m) => (
                <li key={`${g.reference} ${m.url}`} data-url={m.url}>
                  <div class="mono">
                    {m.url} − {g.reference}
                  </div>
                  <div class="muted small">
                    matched {m.matched} (exact {m.exact}) · unmatched {m.unmatched}
                    {m.offsetUs ? ` · p50 ${ms(m.offsetUs.p50)}` : ''}
                  </div>
                  {m.offsetHistogram ? (
                    <HistogramPlot h={m.offsetHistogram} unit={ms} label={`offsets of ${m.url}`} />
                  ) : null}
                </li>
              )),
            )}
          </ul>
          <h3>Counters by cause</h3>
          <CounterBars counters={report.counters} />
        </div>
      ) : null}
    </section>
  );
}
