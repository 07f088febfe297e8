import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus } from 'node:os';
import { resolve } from 'node:path';
import { registerS3, S3Client, type S3Options } from '@vlink/bag-s3';
import { resolveBags } from './bag-list.js';
import { openExportDb } from './duckdb.js';
import { type ExportRun, exportBag } from './export-bag.js';
import { ExportLock, type LockHolder } from './export-lock.js';
import { CopyQueue } from './copy-queue.js';
import { PayloadSource } from './payload-store.js';
import { StagedRowsSet } from './staged-rows.js';
import { StagingTables } from './staging-tables.js';

export interface ExportOptions {
  /** Rows per part file and row group (default 100 000: one row group of ~100k rows, as Spark and DuckDB like). */
  rowGroupRows?: number;
  /** Staged bytes of one url past which it is written out (default 128 MiB, the usual row-group size). */
  maxUrlBytes?: number;
  /** Staged bytes of all urls of a bag past which the largest url is written out (default 256 MiB). */
  maxBufferBytes?: number;
  /** Decode payloads into the `data` STRUCT where a schema is embedded (default true). */
  decode?: boolean;
  /** Protobuf fields by their JSON name (as `cat --json-names`); default the .proto names, as `cat --decode`. */
  jsonNames?: boolean;
  /** Endpoint and credentials for `s3://` bags (default: the `AWS_*` variables). */
  s3?: S3Options;
  /**
   * DuckDB threads for writing Parquet (default: the cores besides the reader's, 1 or 2). One core is the reader's
   * (this JavaScript thread): a second DuckDB thread on a 2-core machine only contends with it (measured on Bun and
   * Node: more CPU and a slower export).
   */
  threads?: number;
  /** Called after each bag (exported or skipped). */
  onBag?: (bag: BagExportReport) => void;
  /** Called after each part file is written (its path relative to `outDir`). */
  onFile?: (path: string) => void;
  /** Stops the export (a BagError `ABORTED`); the bag under way is redone from scratch by the next run. */
  signal?: AbortSignal;
}

export interface UrlExportReport {
  messages: number;
  payloadBytes: number;
  files: number;
  /** Messages of a schema'd url whose payload did not decode: exported with `data` NULL. */
  decodeFailures: number;
  /**
   * Messages whose decoded strings held lone UTF-16 surrogates (JSON text can escape one; UTF-8, hence Parquet,
   * cannot hold it): exported with U+FFFD in their place in `data`; `payload` keeps the bytes as recorded.
   */
  textReplaced: number;
  /**
   * Messages with a decoded field the url's `data` STRUCT has no place for: one missing from the url's earlier
   * messages that widening the STRUCT could not add (a name equal to another but for case, or past the widenings a
   * url may have in a bag). Their `data` lacks that field; `payload` has it.
   */
  droppedFields: number;
}

export interface BagExportReport {
  bagId: string;
  location: string;
  /** True when an earlier export finished this bag as it is now (its done marker is there, with its size and mtime). */
  skipped: boolean;
  /**
   * True when an earlier export of this bag was of another version of it (its size, mtime or ETag differ) or under
   * another bag_id: its part files were deleted (counted in `discardedFiles`) and the bag exported again.
   */
  replaced: boolean;
  messages: number;
  files: number;
  /** Part files an interrupted or outdated earlier export left and this run deleted before exporting the bag again. */
  discardedFiles: number;
}

export interface ExportReport {
  outDir: string;
  bags: number;
  /** Bags exported by an earlier run and left as they were. */
  skipped: number;
  messages: number;
  /** Bytes of the Parquet files written. */
  bytes: number;
  payloadBytes: number;
  files: number;
  decodeFailures: number;
  /** The sum of the urls' {@link UrlExportReport.textReplaced}. */
  textReplaced: number;
  /** The sum of the urls' {@link UrlExportReport.droppedFields}. */
  droppedFields: number;
  /**
   * The export that held the folder's lock when this one started but no longer ran (its process gone, on this host):
   * its lock was taken over. Null when the folder was free.
   */
  staleLock: LockHolder | null;
  perUrl: Record<string, UrlExportReport>;
  perBag: BagExportReport[];
  seconds: number;
}

const DEFAULTS = { rowGroupRows: 100_000, maxUrlBytes: 128 * 1024 * 1024, maxBufferBytes: 256 * 1024 * 1024 };

/**
 * Exports the messages of bags (paths, `s3://…` urls, or catalog folders) as the lake's hive-partitioned Parquet
 * dataset under `outDir` (layout.ts): one row per message with MESSAGE_COLUMNS and, for urls whose payloads decode
 * (protobuf, JSON, CDR, ROS 1 … through the embedded schemas), a `data` STRUCT of the decoded fields. Streams each bag
 * in bounded memory (staged batches per url written out at `rowGroupRows` / `maxUrlBytes` / `maxBufferBytes`) and is
 * resumable: a bag finished by an earlier run is skipped while it is unchanged (its done marker holds its size,
 * mtime and ETag), one that changed is exported again in place of its old parts, one that was interrupted is exported
 * again from scratch. A bag is its location (two catalogs may both hold a `run.vcap`: two bags). One export at a time
 * writes into a folder (`_export/lock.json`): another one fails at once with a BagError `BUSY` naming it.
 */
export async function exportMessages(
  bags: readonly string[],
  outDir: string,
  options: ExportOptions = {},
): Promise<ExportReport> {
  const started = performance.now();
  // Absolute from here on: the journal and the markers name files relative to it, whatever the working directory.
  const root = resolve(outDir);
  const lock = ExportLock.acquire(root);
  const report: ExportReport = {
    outDir,
    bags: 0,
    skipped: 0,
    messages: 0,
    bytes: 0,
    payloadBytes: 0,
    files: 0,
    decodeFailures: 0,
    textReplaced: 0,
    droppedFields: 0,
    staleLock: lock.tookOver ?? null,
    perUrl: {},
    perBag: [],
    seconds: 0,
  };
  let previous: Promise<void> | undefined;
  try {
    const instance = await openExportDb(options.threads ?? defaultThreads(), '1GB');
    const connection = await instance.connect();
    // Two write-outs at once. With the payloads no longer staged on this thread (payload-store.ts) the reading and
    // the write-outs take about as much CPU each, and the write-outs come in bursts (the large batches at the end of a
    // bag): one lane left the reader waiting for them at each bag and after the last (measured on Bun, the
    // benchmark's fleet: 2.20 s instead of 2.26 s; Node 2.89 s instead of 2.94 s).
    const copies = new CopyQueue(await instance.connect());
    copies.addLane(await instance.connect());
    const payloads = new PayloadSource();
    payloads.register(connection);
    const rows = new StagedRowsSet(payloads);
    rows.register(connection);
    const tables = new StagingTables(await instance.connect());
    try {
      const refs = await resolveBags(bags, connection);
      if (refs.some((ref) => /^s3:\/\//i.test(ref.location))) registerS3(options.s3 ?? {});
      let client: S3Client | undefined;
      const run: ExportRun = {
        outDir: root,
        run: randomBytes(6).toString('hex'),
        connection,
        copies,
        payloads,
        rows,
        tables,
        options,
        report,
        s3: () => (client ??= new S3Client(options.s3 ?? {})),
        rowGroupRows: options.rowGroupRows ?? DEFAULTS.rowGroupRows,
        maxUrlBytes: options.maxUrlBytes ?? DEFAULTS.maxUrlBytes,
        maxBufferBytes: options.maxBufferBytes ?? DEFAULTS.maxBufferBytes,
      };
      // The next bag is read while DuckDB still writes out the last batches of the previous one.
      for (const ref of refs) {
        const { bag, finished } = await exportBag(ref, run);
        if (previous) await previous;
        previous = finished.then(() => {
          report.bags++;
          if (bag.skipped) report.skipped++;
          report.perBag.push(bag);
          options.onBag?.(bag);
        });
        previous.catch(() => undefined);
      }
      await previous;
    } finally {
      // never close DuckDB under a write-out (after a failure of the next bag)
      await previous?.catch(() => undefined);
      await copies.close();
      await tables.close();
      connection.closeSync();
      instance.closeSync();
      rows.close();
      payloads.close();
    }
  } finally {
    lock.release();
  }
  for (const url of Object.values(report.perUrl)) report.textReplaced += url.textReplaced;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

function defaultThreads(): number {
  const cores = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;
  return Math.min(2, Math.max(1, cores - 1));
}
