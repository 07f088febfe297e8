import { useState } from 'preact/hooks';
import type { BagSummary } from '../api.js';
import { formatBytes, formatCount } from '../time-format.js';

export interface BagListProps {
  bags: BagSummary[] | undefined;
  error: string | undefined;
  selected: string | undefined;
  onOpen(id: string): void;
  onReload(): void;
}

export function BagList({ bags, error, selected, onOpen, onReload }: BagListProps) {
  const [filter, setFilter] = useState('');
  const shown = (bags ?? []).filter((b) => b.id.toLowerCase().includes(filter.toLowerCase()));
  return (
    <nav class="bags" aria-label="Bags">
      <div class="panel-head">
        <h2>Bags {bags ? <span class="muted">({bags.length})</span> : null}</h2>
        <button type="button" class="small" onClick={onReload} title="Reload the list">
          ⟳
        </button>
      </div>
      {bags && bags.length > 8 ? (
        <input
          class="filter"
          type="search"
          placeholder="Filter…"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
      ) : null}
      {error ? <p class="error">{error}</p> : null}
      {!bags && !error ? <p class="muted">Loading…</p> : null}
      {bags && bags.length === 0 ? <p class="muted">No bags under the served directory.</p> : null}
      <ul data-testid="bag-list">
        {shown.map((b) => (
          <li key={b.id}>
            <button
              type="button"
              class={`bag${b.id === selected ? ' selected' : ''}${b.error ? ' broken' : ''}`}
              onClick={() => onOpen(b.id)}
              title={b.error ? `${b.error.code}: ${b.error.message}` : b.id}
            >
              <span class="bag-id">{b.id}</span>
              <span class="bag-meta">
                {b.format} ·{' '}
                {b.messageCount === null ? (
                  <span class="error">{b.error?.code ?? 'unreadable'}</span>
                ) : (
                  `${formatCount(b.messageCount)} msgs`
                )}{' '}
                · {formatBytes(b.size)}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
