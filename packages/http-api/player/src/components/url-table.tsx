import type { Info, Timing } from '../api.js';
import { formatBytes, formatCount } from '../time-format.js';

export type FilterMode = 'all' | 'whitelist' | 'blacklist';

export const SCHEMA_LABELS = ['unknown', 'raw', 'zerocopy', 'protobuf', 'flatbuffers', 'cdr'];

export interface UrlRow {
  url: string;
  kinds: string;
  ser: string;
  schema: string;
  count: number;
  size: number;
  rateHz: number;
  gaps: number;
}

/** One row per url (a .vcap lists a url once per action: they are merged). Rate is measured by /timing when loaded. */
export function urlRows(info: Info, timing: Timing | undefined): UrlRow[] {
  const rows = new Map<string, UrlRow>();
  // Timing is per url and action: a row's measured rate is its busiest stream's, its gaps those of all its streams.
  const measured = new Map<string, { rateHz: number; gaps: number }>();
  for (const t of timing?.urls ?? []) {
    const m = measured.get(t.url);
    measured.set(t.url, { rateHz: Math.max(m?.rateHz ?? 0, t.rateHz), gaps: (m?.gaps ?? 0) + t.gaps.length });
  }
  for (const u of info.urls) {
    let row = rows.get(u.url);
    if (!row) {
      const t = measured.get(u.url);
      row = {
        url: u.url,
        kinds: '',
        ser: u.ser,
        schema: SCHEMA_LABELS[u.schemaType] ?? String(u.schemaType),
        count: 0,
        size: 0,
        rateHz: t ? t.rateHz : u.freq,
        gaps: t?.gaps ?? 0,
      };
      rows.set(u.url, row);
    }
    const kind = u.action ?? u.type;
    if (kind && !row.kinds.split(', ').includes(kind)) row.kinds = row.kinds ? `${row.kinds}, ${kind}` : kind;
    row.count += u.count;
    row.size += u.size;
  }
  return [...rows.values()];
}

export interface UrlTableProps {
  rows: UrlRow[];
  mode: FilterMode;
  chosen: ReadonlySet<string>;
  selected: string | undefined;
  onMode(mode: FilterMode): void;
  onToggle(url: string): void;
  onSelect(url: string): void;
}

export function UrlTable({ rows, mode, chosen, selected, onMode, onToggle, onSelect }: UrlTableProps) {
  return (
    <section class="panel urls" aria-label="Urls">
      <div class="panel-head">
        <h2>Urls</h2>
        <label title="Which urls the replay sends: a whitelist keeps the ticked urls, a blacklist leaves them out">
          Filter{' '}
          <select data-testid="filter-mode" value={mode} onChange={(e) => onMode(e.currentTarget.value as FilterMode)}>
            <option value="all">all urls</option>
            <option value="whitelist">whitelist</option>
            <option value="blacklist">blacklist</option>
          </select>
        </label>
      </div>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              {mode !== 'all' ? (
                <th title={mode === 'whitelist' ? 'Replay these' : 'Leave these out'}>
                  {mode === 'whitelist' ? 'keep' : 'drop'}
                </th>
              ) : null}
              <th>url</th>
              <th>kind</th>
              <th>ser</th>
              <th class="num">count</th>
              <th class="num" title="Measured by /timing (messages per second)">
                rate
              </th>
              <th class="num">size</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.url} class={r.url === selected ? 'selected' : ''} onClick={() => onSelect(r.url)}>
                {mode !== 'all' ? (
                  // biome-ignore lint/a11y/useKeyWithClickEvents: the cell only keeps a click on its checkbox from also selecting the row; keyboard users reach the checkbox itself
                  <td onClick={(e) => e.stopPropagation()}>
                    <input
                      type="checkbox"
                      aria-label={`${mode} ${r.url}`}
                      checked={chosen.has(r.url)}
                      onChange={() => onToggle(r.url)}
                    />
                  </td>
                ) : null}
                <td class="mono" title={r.url}>
                  {r.url}
                  {r.gaps > 0 ? (
                    <span class="badge warn" title={`${r.gaps} gap(s)`}>
                      {r.gaps}
                    </span>
                  ) : null}
                </td>
                <td>{r.kinds}</td>
                <td class="mono" title={`${r.schema}: ${r.ser}`}>
                  {r.ser || r.schema}
                </td>
                <td class="num">{formatCount(r.count)}</td>
                <td class="num">
                  {r.rateHz > 0 ? `${r.rateHz >= 100 ? r.rateHz.toFixed(0) : r.rateHz.toFixed(1)} Hz` : '–'}
                </td>
                <td class="num">{formatBytes(r.size)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
