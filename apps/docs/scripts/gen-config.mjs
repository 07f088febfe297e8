// The default tables of guide/recording.md and guide/replay.md, read from the values core exports
// (DEFAULT_WRITER_CONFIG, DEFAULT_PLAY_CONFIG, DEFAULT_PROCESSOR_CONFIG, DEFAULT_TRIGGER_CONFIG). The defaults come from
// the code; the explanations are written here, and the build fails when a field has no explanation or an explanation
// names a field the code no longer has, so the tables and the code cannot disagree.
import {
  CompressType,
  DEFAULT_PLAY_CONFIG,
  DEFAULT_PROCESSOR_CONFIG,
  DEFAULT_TRIGGER_CONFIG,
  DEFAULT_WRITER_CONFIG,
} from '@vlink/bag-core';
import { cell, fail, fromDocs, generatedBy, table, writeIfChanged } from './lib.mjs';

const SCRIPT = 'gen-config.mjs';

// [unit, meaning]. Units: 'bytes', 'ms', '' (none).
const WRITER = {
  tagName: ['', 'Header tag. Empty → env `VLINK_BAG_TAG` → `"Empty"`.'],
  compress: [
    '',
    '`none`, `auto` (LZAV per message for `.vdb`, zstd chunks for `.vcap`), `lzav`, `zstd`; a `CompressType` or its name. `.vcap` never writes lz4.',
  ],
  walMode: ['', '`.vdb`: SQLite WAL journal while recording (reverted to a rollback journal at close).'],
  enableLimit: [
    '',
    '`.vdb`: once `maxRowCount`/`maxBytesSize` is reached, evict the oldest rows instead of refusing new frames (`LIMIT_REACHED`). Ignored by `.vcap`.',
  ],
  splitNameByTime: [
    '',
    'Split recordings: name segments by local time (`YYYY-MM-DD_hh-mm-ss-mmm.vdb`) instead of `<stem>.<n>.vdb`.',
  ],
  overwriteSegments: [
    '',
    'Split recordings: a new segment replaces a file already at its name (VLink). `false` refuses it instead: opening that segment fails with `IO_ERROR` naming the file, which is left as it was (the CLI without `-f`).',
  ],
  syncMode: [
    '',
    "Write on the caller's stack: no queue, no worker, no commit timer; `push()` returns after the frame is stored.",
  ],
  optimizeOnExit: ['', '`.vdb`: `PRAGMA optimize` at close.'],
  enableChunkCrc: ['', '`.vcap`: CRC32 of every chunk.'],
  maxRowCount: ['', '`.vdb` limit on rows (see `enableLimit`).'],
  maxBytesSize: ['bytes', '`.vdb` limit on payload bytes (see `enableLimit`).'],
  splitBySize: [
    'bytes',
    "`.vdbx`/`.vcapx`: start a new segment before the segment's payload would exceed this. Single files ignore it.",
  ],
  splitByTime: [
    'ms',
    '`.vdbx`/`.vcapx`: start a new segment every this many ms of recording time (takes priority over size); 0 = off.',
  ],
  maxSplitCount: ['', 'Split recordings: keep at most this many segment files, deleting the oldest (0 = keep all).'],
  beginTime: ['ms', 'Offset of the time-split boundaries.'],
  cacheSize: [
    'bytes',
    '`.vdb`: commit once this much was written since the last commit; `.vcap`: chunk size (≤ 0: no chunks, no compression).',
  ],
  compressStartSize: ['bytes', '`.vdb` LZAV: payloads smaller than this are stored as they are.'],
  compressLevel: [
    '',
    '`.vdb` LZAV: above 3 picks the high-ratio compressor. `.vcap` zstd level map: 1 → −5, 2 → −3, 3 (and others) → 1, 4 → 5, 5 → 19.',
  ],
  maxTaskDepth: [
    '',
    'Async mode: frames queued before `push()` refuses (returns −1, counted as `queueDepth` in `stats().dropped`).',
  ],
  maxMemorySize: ['bytes', 'Async mode: payload bytes queued before `push()` refuses (`queueMemory`).'],
  startTimestamp: [
    'ms',
    'Recording start, ms since the epoch, when > 0; else the wall clock when the writer is created. Frame timestamps are µs after it.',
  ],
  ignoreCompressUrls: ['', '`.vdb`: exact urls whose payloads are never compressed (already-compressed images, …).'],
};

const PLAY = {
  beginTime: ['ms', 'Window start, ms since recording start.'],
  endTime: ['ms', 'Window end, inclusive; 0 = to the end.'],
  times: ['', 'Passes; ≤ 0 loops forever.'],
  rate: ['', 'Speed multiplier; ≤ 0 is treated as 1.'],
  skipBlank: ['', 'Start at `max(beginTime, blankDuration)`: skip the silence before the first frame.'],
  forceDelay: [
    'ms',
    '> 0: a fixed wait before every frame; 0: no waiting (as fast as the consumer takes frames); < 0: the original timing.',
  ],
  autoPause: ['', 'Start the session paused.'],
  autoQuit: ['', 'Stop the playback loop once the session ends (unless a jump ended it).'],
  filterUrls: ['', "Playback urls to keep (after a read plugin's remap); empty = all."],
  timeBase: [
    '',
    "`'log'` paces frames by their log (receive) time, `'publish'` by their publish (sample) time; file order is kept either way.",
  ],
};

const PROCESSOR = {
  minCacheTime: ['ms', 'Reorder window: the oldest frame is released once the newest is this much newer.'],
  maxCacheSize: [
    'bytes',
    'Payload held before the oldest frame is released regardless of time; `push()` returns false and `waitForRoom()` waits.',
  ],
  maxJumpTime: [
    'ms',
    'A data timestamp further than this from the previous one is replaced by the recording-time delta (0 = off).',
  ],
  drainAfterMs: [
    'ms',
    "Wall-clock drain: also release the oldest frame once it waited this long (0 = off, VLink's newest behaviour).",
  ],
  copyData: ['', 'Copy each payload on `push()` (readers reuse their buffers).'],
};

const TRIGGER = {
  dumpDir: ['', 'Output directory; empty → `$VLINK_TMP_DIR` or the system temp dir, `/vlink-trigger`.'],
  fileType: ['', 'Dump format as an extension without the dot: `vdb`, `vcap`, or any registered one.'],
  defaultPreMs: ['ms', 'History kept before a trigger.'],
  defaultPostMs: ['ms', 'Recording continued after a trigger.'],
  defaultMaxPacketSize: ['bytes', 'Larger frames are dropped on ingest (0 = unlimited).'],
  defaultMaxSize: ['bytes', 'Per-url ring cap (0 = unlimited).'],
  maxCacheSize: ['bytes', 'Cap of all rings together (0 = unlimited).'],
  retentionGuardMs: ['ms', 'Retention margin, and the extra wait after the post window before writing.'],
  maxDumpFileCount: ['', 'Auto-named dumps kept in `dumpDir`, oldest deleted first (0 = unlimited).'],
  enableCompress: ['', 'Compress dumps (`auto`).'],
  enableChunkCrc: ['', '`.vcap` dumps: chunk CRCs.'],
  busySkipData: ['', 'Drop ingested frames while a dump is written.'],
  overflow: ['', '`dropNewest` or `coverOldest` when a cap would be exceeded.'],
  sleepInterval: ['bytes', 'Throttle: sleep `sleepTimeMs` after every this many bytes written.'],
  sleepTimeMs: ['ms', 'Throttle pause (0 = no throttle).'],
  whitelist: ['', 'Exact urls to record; empty = all.'],
  blacklist: ['', 'Exact urls never recorded.'],
  urlOverrides: ['', 'Per-url `preMs`, `postMs`, `maxPacketSize`, `maxSize`, `onlyFront`, `onlyBack`.'],
  sweepIntervalMs: ['ms', 'How often expired ring entries are swept.'],
  bagPlugin: [
    '',
    "Optional factory of a plugin bound to each dump's writer (e.g. a `BagProcessorPlugin` to store in data-plane time). No default.",
  ],
};

const KiB = 1024;
function sized(n) {
  for (const [unit, size] of [
    ['GiB', KiB ** 3],
    ['MiB', KiB ** 2],
    ['KiB', KiB],
  ]) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} B`;
}
const group = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '_');

function formatDefault(key, value, unit) {
  if (value === undefined) return '—';
  if (key === 'compress' && typeof value === 'number')
    return `\`'${CompressType[value].toLowerCase()}'\` (\`CompressType.${CompressType[value]}\`)`;
  if (typeof value === 'number') {
    if (unit === 'bytes' && value > 0) return `\`${group(value)}\` (${sized(value)})`;
    if (unit === 'ms' && value >= 60_000 && value % 60_000 === 0) return `\`${group(value)}\` (${value / 60_000} min)`;
    return `\`${group(value)}\``;
  }
  if (typeof value === 'string') return `\`${JSON.stringify(value)}\``;
  if (Array.isArray(value) || (value && typeof value[Symbol.iterator] === 'function' && typeof value !== 'string'))
    return `\`${JSON.stringify([...value])}\``;
  return `\`${JSON.stringify(value)}\``;
}

function render(name, defaults, described, optional = []) {
  const keys = Object.keys(defaults);
  const missing = keys.filter((key) => !(key in described));
  const stale = Object.keys(described).filter((key) => !keys.includes(key) && !optional.includes(key));
  if (missing.length > 0)
    fail(SCRIPT, `${name} has fields without an explanation in apps/docs/scripts/${SCRIPT}: ${missing.join(', ')}`);
  if (stale.length > 0)
    fail(SCRIPT, `apps/docs/scripts/${SCRIPT} explains fields ${name} no longer has: ${stale.join(', ')}`);
  const rows = [...keys, ...optional].map((key) => {
    const [unit, meaning] = described[key];
    return [`\`${key}\``, formatDefault(key, defaults[key], unit), unit, cell(meaning).replace(/\\\|/g, '\\|')];
  });
  return table(['Field', 'Default', 'Unit', 'Meaning'], rows);
}

function fragment(source, body) {
  return `${generatedBy(SCRIPT, source)}\n\n${body}\n`;
}

export async function generate() {
  writeIfChanged(
    fromDocs('guide/_writer-config.md'),
    fragment('DEFAULT_WRITER_CONFIG', render('DEFAULT_WRITER_CONFIG', DEFAULT_WRITER_CONFIG, WRITER)),
  );
  writeIfChanged(
    fromDocs('guide/_play-config.md'),
    fragment('DEFAULT_PLAY_CONFIG', render('DEFAULT_PLAY_CONFIG', DEFAULT_PLAY_CONFIG, PLAY)),
  );
  writeIfChanged(
    fromDocs('guide/_processor-config.md'),
    fragment('DEFAULT_PROCESSOR_CONFIG', render('DEFAULT_PROCESSOR_CONFIG', DEFAULT_PROCESSOR_CONFIG, PROCESSOR)),
  );
  writeIfChanged(
    fromDocs('guide/_trigger-config.md'),
    fragment(
      'DEFAULT_TRIGGER_CONFIG',
      render('DEFAULT_TRIGGER_CONFIG', DEFAULT_TRIGGER_CONFIG, TRIGGER, ['bagPlugin']),
    ),
  );
  return `${Object.keys(DEFAULT_WRITER_CONFIG).length} writer, ${Object.keys(DEFAULT_PLAY_CONFIG).length} play, ${Object.keys(DEFAULT_PROCESSOR_CONFIG).length} processor, ${Object.keys(DEFAULT_TRIGGER_CONFIG).length} trigger fields`;
}
