import type { Info } from '../api.js';
import { formatBytes, formatCount, formatDuration, formatTime, tzLabel } from '../time-format.js';

/** The summary cards of the open bag. */
export function BagInfo({ info }: { info: Info }) {
  const urls = new Set(info.urls.map((u) => u.url)).size;
  const cards: Array<[string, string, string?]> = [
    [
      'Duration',
      formatDuration(info.totalDuration),
      `${info.totalDuration} ms; first message at ${formatDuration(info.blankDuration)}`,
    ],
    ['Messages', formatCount(info.messageCount)],
    ['Urls', String(urls)],
    [
      'Size',
      formatBytes(info.fileSize),
      `${formatBytes(info.totalRawSize)} of payload, ${info.compressionType || 'no'} compression`,
    ],
    ['Format', `${info.format} ${info.version}`, info.storageType],
    [
      'Start',
      formatTime({ mode: 'local', startMs: info.startTimestamp, timezone: info.timezone }, 0),
      `${tzLabel(info.timezone)} (the recording's zone)`,
    ],
  ];
  // Counters by cause: the total on the card, every url and cause in its tooltip.
  const counted = Object.entries(info.counters ?? {}).flatMap(([url, causes]) =>
    Object.entries(causes).map(([cause, n]) => ({ url, cause, n })),
  );
  const total = counted.reduce((sum, c) => sum + c.n, 0);
  return (
    <section class="cards" data-testid="bag-info" aria-label="Bag info">
      {cards.map(([label, value, title]) => (
        <div class="card" key={label} title={title}>
          <div class="card-label">{label}</div>
          <div class="card-value">{value}</div>
        </div>
      ))}
      {total > 0 ? (
        <div
          class="card warn"
          data-testid="bag-counters"
          title={counted.map((c) => `${c.url}  ${c.cause}: ${formatCount(c.n)}`).join('\n')}
        >
          <div class="card-label">Counters</div>
          <div class="card-value">{formatCount(total)}</div>
        </div>
      ) : null}
      {!info.hasCompleted ? (
        <div class="card warn" title="The recording was not closed cleanly or is still being written">
          <div class="card-label">State</div>
          <div class="card-value">incomplete</div>
        </div>
      ) : null}
    </section>
  );
}
