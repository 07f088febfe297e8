// The benchmarks bench/run.mjs knows: how to run each, where it writes its results, and how to summarize them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarize as healthSummary } from './summaries/health.mjs';
import { summarize as httpSummary } from './summaries/http.mjs';
import { summarize as lzavSummary } from './summaries/lzav.mjs';
import { summarize as openInfoSummary } from './summaries/open-info.mjs';
import { summarize as playbackSummary } from './summaries/playback.mjs';
import { summarize as pythonSummary } from './summaries/python.mjs';
import { summarize as readRssSummary } from './summaries/read-rss.mjs';
import { summarize as vcapSummary } from './summaries/vcap.mjs';
import { summarize as vdbSummary } from './summaries/vdb.mjs';
import { summarize as writerSummary } from './summaries/writer.mjs';

export const RUNTIMES = ['node', 'bun', 'deno'];

const readJson = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined);
/** The usual shape: one file per runtime, `<name>-<runtime>.json`. */
const perRuntime = (name) => (dir, runtime) => ({
  file: join(dir, `${name}-${runtime}.json`),
  data: readJson(join(dir, `${name}-${runtime}.json`)),
});

/**
 * In the order of the goals in the issues (run order, and the order of the Goals table).
 * name: for --only and the results file; script: in bench/; python: run with the client's venv, once per server
 * runtime; deno: false plus a reason where it cannot run on Deno; load(dir, runtime) → { file, data }.
 */
export const BENCHMARKS = [
  { name: 'vcap', script: 'vcap.bench.mjs', load: perRuntime('vcap'), summarize: vcapSummary },
  { name: 'vdb', script: 'vdb.bench.mjs', load: perRuntime('vdb'), summarize: vdbSummary },
  { name: 'writer', script: 'writer.bench.mjs', load: perRuntime('writer'), summarize: writerSummary },
  { name: 'playback', script: 'playback.bench.mjs', load: perRuntime('playback'), summarize: playbackSummary },
  { name: 'http', script: 'http.bench.mjs', load: perRuntime('http'), summarize: httpSummary },
  { name: 'health', script: 'health.bench.mjs', load: perRuntime('health'), summarize: healthSummary },
  {
    name: 'python',
    script: 'python_read.py',
    python: true,
    deno: 'python_read.py starts the server with node or bun only (its --runtime choices)',
    load: (dir, runtime) => {
      const own = perRuntime('python')(dir, runtime);
      if (own.data) return own;
      // Results written by python_read.py run by hand (its default output), when they are for this server runtime.
      const legacy = join(dir, 'python.json');
      const data = readJson(legacy);
      return data?.server?.runtime === runtime ? { file: legacy, data } : own;
    },
    summarize: pythonSummary,
  },
  {
    name: 'lzav',
    script: 'lzav.bench.mjs',
    // One file, keyed by runtime.
    load: (dir, runtime) => ({ file: join(dir, 'lzav.json'), data: readJson(join(dir, 'lzav.json'))?.[runtime] }),
    summarize: lzavSummary,
  },
  { name: 'open-info', script: 'open-info.bench.mjs', load: perRuntime('open-info'), summarize: openInfoSummary },
  { name: 'read-rss', script: 'read-rss.bench.mjs', load: perRuntime('read-rss'), summarize: readRssSummary },
];

/** The sections of BENCHMARKS.md, one per row of issue 12's table (and its memory line), in order. */
export const SECTIONS = [
  {
    id: 'vcap-write',
    title: '`.vcap` write',
    about:
      'BagWriter (and the bare Backend writer) vs `@mcap/core` McapWriter and a raw `fs` write+fsync of the same payload bytes; 64 B / 4 KiB / 1 MiB, no compression and zstd. lz4 is not measured (the bench covers none and zstd).',
  },
  {
    id: 'vdb-write',
    title: '`.vdb` write',
    about:
      "BagWriter (and the bare Backend writer) vs the same SQLite driver's raw prepared INSERT loop with the writer's pragmas and commit batching; 64 B / 4 KiB / 1 MiB, LZAV on and off.",
  },
  {
    id: 'read',
    title: '`.vcap` / `.vdb` read',
    about:
      "Backend readers vs `@mcap/core` McapIndexedReader and the raw driver's SELECT iterate (page cache warm); BagReader's cursor and async iterator over a large bag vs a cold-cache `fs` read of the same file.",
  },
  {
    id: 'open-info',
    title: 'Open + info of a 1M-message bag',
    about: 'BagReader.create + getInfo() in a fresh process, absolute, both formats.',
  },
  {
    id: 'writer',
    title: 'Producer push() cost, event-loop delay, worker throughput',
    about: 'The worker writer (default) vs `syncMode` (and the in-thread queue for event-loop delay).',
  },
  {
    id: 'playback',
    title: 'Playback timing',
    about: 'BagReader.play at rate 1 vs the ideal schedule; forceDelay 0 vs a plain cursor loop.',
  },
  {
    id: 'http',
    title: 'HTTP API',
    about:
      'The server (in a child process of the same runtime) over loopback: NDJSON, JSON pages, binary stream, WebSocket replay, vs a raw loopback socket copy of the same bytes; reader cache; 100 concurrent replay clients.',
  },
  {
    id: 'health',
    title: 'Server health under hostile and heavy load',
    about:
      '`/v1/health` latency while hostile bags are opened and while two clients export a large bag as NDJSON with decode, with bag work in worker threads (as shipped) vs on the event loop (`workers: 0`, as before issue 21); export throughput of one client vs two.',
  },
  {
    id: 'python',
    title: 'Python client',
    about:
      '`RemoteBag.read_messages` over HTTP (server on the runtime named) vs the `mcap` PyPI reader on the local file.',
  },
  {
    id: 'lzav',
    title: 'LZAV codec',
    about: 'The TypeScript codec: MB/s, and compressed size vs the C reference output of each shared fixture vector.',
  },
  {
    id: 'memory',
    title: 'Memory',
    about: 'Peak RSS recording with a disk slower than the producer, and reading a large bag.',
  },
];
