import { availableParallelism, cpus } from 'node:os';
import { relative } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { BagReader } from '@vlink/bag';
import { BagError } from '@vlink/bag-core';
import { PayloadDecoder } from '@vlink/bag-decode';
import type { S3Options } from '@vlink/bag-s3';
import { type BagRef, resolveBags } from './bag-list.js';
import { asRecord, structureOf } from './data-structure.js';
import { openExportDb } from './duckdb.js';
import { BagExportState } from './export-state.js';
import { bagHash } from './paths.js';
import { CopyQueue, type PartTarget, UrlBatch } from './url-batch.js';

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
}

export interface BagExportReport {
  bagId: string;
  location: string;
  /** True when an earlier export finished this bag (its done marker is there). */
  skipped: boolean;
  messages: number;
  files: number;
  /** Part files an interrupted earlier export left and this run deleted before exporting the bag again. */
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
 * resumable: a bag finished by an earlier run is skipped; one that was interrupted is exported again from scratch.
 */
export async function exportMessages(
  bags: readonly string[],
  outDir: string,
  options: ExportOptions = {},
): Promise<ExportReport> {
  const started = performance.now();
  const instance = await openExportDb(options.threads ?? defaultThreads(), '1GB');
  const connection = await instance.connect();
  const copies = new CopyQueue(await instance.connect());
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
    perUrl: {},
    perBag: [],
    seconds: 0,
  };
  let previous: Promise<void> | undefined;
  try {
    const refs = await resolveBags(bags, connection);
    if (refs.some((ref) => /^s3:\/\//i.test(ref.location))) {
      const { registerS3 } = await import('@vlink/bag-s3');
      registerS3(options.s3 ?? {});
    }
    // The next bag is read while DuckDB still writes out the last batches of the previous one.
    for (const ref of refs) {
      const { bag, finished } = await exportBag(ref, outDir, connection, copies, options, report);
      if (previous) await previous;
      previous = finished.then(() => {
        report.bags++;
        if (bag.skipped) report.skipped++;
        report.perBag.push(bag);
        options.onBag?.(bag);
      });
      previous.catch(() => undefined);
    }
    // The reading is over: the last bag's write-outs may use the reader's core too.
    copies.addLane(await instance.connect());
    await previous;
  } finally {
    // never close DuckDB under a write-out (after a failure of the next bag)
    await previous?.catch(() => undefined);
    await copies.close();
    connection.closeSync();
    instance.closeSync();
  }
  for (const url of Object.values(report.perUrl)) report.textReplaced += url.textReplaced;
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

function urlReport(report: ExportReport, url: string): UrlExportReport {
  let entry = report.perUrl[url];
  if (!entry) {
    entry = { messages: 0, payloadBytes: 0, files: 0, decodeFailures: 0, textReplaced: 0 };
    report.perUrl[url] = entry;
  }
  return entry;
}

async function exportBag(
  ref: BagRef,
  outDir: string,
  connection: DuckDBConnection,
  copies: CopyQueue,
  options: ExportOptions,
  report: ExportReport,
): Promise<{ bag: BagExportReport; finished: Promise<void> }> {
  const hash = bagHash(ref.bagId);
  const state = new BagExportState(outDir, hash);
  const done = state.done(ref.bagId);
  const bag: BagExportReport = {
    bagId: ref.bagId,
    location: ref.location,
    skipped: done !== undefined,
    messages: done?.messages ?? 0,
    files: done?.files.length ?? 0,
    discardedFiles: 0,
  };
  if (done) return { bag, finished: Promise.resolve() };
  bag.discardedFiles = state.discardInterrupted();
  const files: string[] = [];
  let part = 0;
  const target: PartTarget = {
    outDir,
    bagId: ref.bagId,
    hash,
    state,
    rowGroupRows: options.rowGroupRows ?? DEFAULTS.rowGroupRows,
    nextPart: () => part++,
    written: (url, path, bytes) => {
      const name = relative(outDir, path).replaceAll('\\', '/');
      files.push(name);
      report.files++;
      report.bytes += bytes;
      urlReport(report, url).files++;
      options.onFile?.(name);
    },
  };
  const maxUrlBytes = options.maxUrlBytes ?? DEFAULTS.maxUrlBytes;
  const maxBufferBytes = options.maxBufferBytes ?? DEFAULTS.maxBufferBytes;
  const reader = await BagReader.create(ref.location);
  const batches = new Map<string, UrlBatch>();
  try {
    const info = reader.getInfo();
    const startUs = Math.round(info.startTimestamp * 1000);
    const decoder =
      options.decode === false
        ? undefined
        : new PayloadDecoder({
            schemas: reader.getSchemas(),
            urls: info.urls,
            jsonNames: options.jsonNames === true,
            // Every field in every message, so the url's STRUCT (taken from its first message) has them all.
            alwaysEmitImplicit: true,
          });
    let staged = 0;
    let seq = 0;
    // The last frame's url and its batch: consecutive frames of one url skip the map lookups.
    let lastUrl: string | undefined;
    let batch: UrlBatch | undefined;
    if (reader.openCursor({})) {
      for (let frame = reader.next(); frame; frame = reader.next()) {
        if ((seq & 1023) === 0) {
          checkAborted(options.signal);
          // Lets the write-outs under way go on to their next statement (measured: without it, DuckDB waited for
          // most of a bag's reading and the reader then for DuckDB; an event-loop turn costs some 20-100 µs).
          if (copies.busy) await setImmediate();
        }
        if (frame.url !== lastUrl || batch === undefined) {
          lastUrl = frame.url;
          batch = batches.get(frame.url);
          if (batch === undefined) {
            batch = new UrlBatch(connection, copies, frame.url, urlReport(report, frame.url));
            batches.set(frame.url, batch);
          }
        }
        const perUrl = batch.report;
        let record: Record<string, unknown> | undefined;
        let plain = false;
        // A JSON payload the url's check accepts is its own `data`: DuckDB decodes it during the write-out, in C++ on
        // its thread, instead of JSON.parse and the typed writer on this one (raw-json.ts).
        let dataInPayload =
          decoder !== undefined &&
          batch.rawJson !== undefined &&
          batch.isJson(frame, decoder) &&
          batch.rawJson(frame.data);
        if (decoder && !dataInPayload) {
          const decoded = decoder.decode(frame);
          if (decoded.kind === 'hex' || (decoded.kind === 'text' && decoder.encodingOf(frame) === 'json')) {
            if (decoded.kind !== 'hex' || decoded.error) {
              perUrl.decodeFailures++;
              report.decodeFailures++;
            }
          } else if (decoded.kind !== 'text') {
            const value = asRecord(decoded.value);
            batch.structure ??= structureOf(value);
            if (batch.structure !== undefined) {
              record = value;
              plain = decoded.kind === 'json';
            }
          }
        }
        // Opened after the first message is decoded, so the staging tables know the url's `data` structure.
        if (!batch.ready) {
          await batch.open();
          // Its first message too, so a url's chunks usually hold no typed rows (cheaper NULLs, staging-chunk.ts).
          if (plain && batch.rawJson?.(frame.data)) {
            record = undefined;
            dataInPayload = true;
          }
        }
        const publish = frame.publishTime;
        const size = frame.data.byteLength;
        const added = batch.append(
          seq++,
          startUs + frame.timestamp,
          publish === undefined || !Number.isFinite(publish) ? undefined : startUs + publish,
          frame.actionType,
          frame.serType,
          frame.data,
          record,
          plain,
          dataInPayload,
        );
        staged += added;
        perUrl.messages++;
        perUrl.payloadBytes += size;
        report.payloadBytes += size;
        if (batch.rows >= target.rowGroupRows || batch.bytes >= maxUrlBytes) {
          staged -= batch.bytes;
          await batch.flush(target);
          checkAborted(options.signal);
        } else if (staged >= maxBufferBytes) {
          const largest = [...batches.values()].reduce((a, b) => (b.bytes > a.bytes ? b : a));
          staged -= largest.bytes;
          await largest.flush(target);
          checkAborted(options.signal);
        }
      }
    }
    if (reader.fail()) {
      throw reader.getLastError() ?? new BagError('CORRUPT_FILE', 'reading failed', { file: ref.location });
    }
    // Written out after this returns, while the caller reads the next bag; the marker only once every part is there.
    const closing = [...batches.values()];
    batches.clear();
    const finishing = Promise.all(closing.map((batch) => batch.finish(target)));
    const finished = (async () => {
      await finishing;
      bag.messages = seq;
      bag.files = files.length;
      report.messages += seq;
      state.finish({
        bag_id: ref.bagId,
        location: ref.location,
        messages: seq,
        files,
        exported_at: new Date().toISOString(),
      });
    })();
    finished.catch(() => undefined);
    return { bag, finished };
  } finally {
    reader.close();
    // After a failure: drop what was staged (the journal lets the next run delete the parts already written).
    for (const batch of batches.values()) await batch.discard();
  }
}

function defaultThreads(): number {
  const cores = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;
  return Math.min(2, Math.max(1, cores - 1));
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BagError('ABORTED', 'export stopped; the next run redoes the unfinished bag');
}
