import type { Timing } from '../api.js';
import { formatDuration, formatTime, type Clock } from '../time-format.js';

export interface GapRow {
  url: string;
  /** The stream's action (gaps are found per url and action). */
  action: string | null;
  startMs: number;
  lengthMs: number;
}

export function gapRows(timing: Timing | undefined): GapRow[] {
  const rows: GapRow[] = [];
  for (const u of timing?.urls ?? [])
    for (const g of u.gaps)
      rows.push({ url: u.url, action: u.action, startMs: g.startUs / 1000, lengthMs: g.lengthUs / 1000 });
  return rows.sort((a, b) => a.startMs - b.startMs || (a.url < b.url ? -1 : 1));
}

export interface GapListProps {
  rows: GapRow[];
  loading: boolean;
  error: string | undefined;
  factor: number;
  clock: Clock;
  onFactor(factor: number): void;
  onShow(gap: GapRow): void;
}

/** Gaps from `/timing`: an interval longer than `factor` × the url's median period. A click seeks and zooms to it. */
export function GapList({ rows, loading, error, factor, clock, onFactor, onShow }: GapListProps) {
  return (
    <section class="panel gaps" aria-label="Gaps">
      <div class="panel-head">
        <h2>
          Gaps{' '}
          <span class={rows.length > 0 ? 'badge warn' : 'badge'} data-testid="gap-count">
            {loading ? '…' : rows.length}
          </span>
        </h2>
        <label title="A gap is an interval longer than this many times the url's median period">
          factor{' '}
          <input
            type="number"
            min="1.1"
            step="0.5"
            value={factor}
            onChange={(e) => {
              const v = Number(e.currentTarget.value);
              if (v > 1) onFactor(v);
            }}
          />
          ×
        </label>
      </div>
      {error ? <p class="error">{error}</p> : null}
      {!loading && !error && rows.length === 0 ? <p class="muted">No gaps at {factor}× the median period.</p> : null}
      <div class="scroll">
        <ul data-testid="gap-list">
          {rows.map((g) => (
            <li key={`${g.url}/${g.action}@${g.startMs}`}>
              <button type="button" class="gap" onClick={() => onShow(g)} title="Seek to the gap and zoom to it">
                <span class="mono gap-url">
                  {g.url}
                  {g.action && g.action !== 'Pub' ? ` ${g.action}` : ''}
                </span>
                <span class="mono">{formatTime(clock, g.startMs)}</span>
                <span class="gap-len">{formatDuration(g.lengthMs)}</span>
              </button>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
