import { setImmediate } from 'node:timers/promises';
import { BagReader } from '@vlink/bag';
import { BagError } from '@vlink/bag-core';
import { PayloadDecoder } from '@vlink/bag-decode';
import type { S3Client } from '@vlink/bag-s3';
import { bagFacts, sameFacts } from './bag-facts.js';
import type { BagRef } from './bag-list.js';
import { asRecord, structureOf } from './data-structure.js';
import type { BagExportReport, ExportOptions, ExportReport, UrlExportReport } from './export-messages.js';
import { BagExportState, type DoneMarker, markerFacts } from './export-state.js';
import { bagHash } from './paths.js';
import { fits, widen } from './structure-fit.js';
import { type BatchContext, type PartTarget, UrlBatch } from './url-batch.js';

/** What the bags of one export share (and its batches: the connection, write-outs, payloads and tables). */
export interface ExportRun extends BatchContext {
  /** Absolute. */
  outDir: string;
  /** Unique to this run (temporary names). */
  run: string;
  options: ExportOptions;
  report: ExportReport;
  /** The S3 client for `s3://` bags' facts, made when first needed. */
  s3: () => S3Client;
  rowGroupRows: number;
  maxUrlBytes: number;
  maxBufferBytes: number;
}

/**
 * Decoded kinds whose messages may lack fields another message of the url has (flatbuffers leaves out unset fields,
 * protobuf unset message and `optional` fields even with every implicit one written; JSON and CBOR anything). ROS 1,
 * CDR and ULog messages always hold every field of their definition: theirs are not checked (no per-message walk).
 */
const VARYING = new Set(['protobuf', 'flatbuffer', 'json', 'cbor']);

/**
 * Times a url's `data` structure may be widened in one bag (each ends a part file early): a url whose messages keep
 * bringing new keys (a JSON map keyed by ids) is not a STRUCT, and past this its new fields are counted instead.
 */
const MAX_WIDENINGS = 8;

/**
 * The reading loop turns the event loop every this + 1 frames while write-outs are under way, each turn serving at
 * most one chunk of 2048 payloads to a write-out (measured on Bun: every 1024 frames, the write-outs fell behind the
 * reading, which then waited for them; every 64, they keep up).
 */
const YIELD_EVERY = 63;

/**
 * Exports one bag: skipped when its done marker says it was exported as it is now (same id, size, mtime, ETag);
 * when the marker is of another version (or id), that export's parts are deleted first and it is exported again.
 * Returns once the bag is read; `finished` settles when its last parts are written and its marker is in place.
 */
export async function exportBag(
  ref: BagRef,
  run: ExportRun,
): Promise<{ bag: BagExportReport; finished: Promise<void> }> {
  const { outDir, copies, options, report, rowGroupRows, maxUrlBytes, maxBufferBytes } = run;
  const hash = bagHash(ref.key);
  const state = new BagExportState(outDir, hash, run.run);
  const facts = await bagFacts(ref, run.s3);
  const bag: BagExportReport = {
    bagId: ref.bagId,
    location: ref.location,
    skipped: false,
    replaced: false,
    messages: 0,
    files: 0,
    discardedFiles: 0,
  };
  const done = state.done();
  if (done) {
    if (done.location !== ref.key)
      throw new BagError('CORRUPT_DATA', `the done marker ${hash} names another bag (${done.location})`, {
        file: ref.location,
      });
    const recorded = markerFacts(done);
    // A bag gone since its export keeps its rows (nothing to compare with, nothing to read).
    if (facts === undefined || (done.bag_id === ref.bagId && recorded !== undefined && sameFacts(recorded, facts))) {
      bag.skipped = true;
      bag.messages = done.messages;
      bag.files = done.files.length;
      return { bag, finished: Promise.resolve() };
    }
    bag.replaced = true;
    bag.discardedFiles += io(() => state.discardExported(done), 'cannot delete the earlier export of the bag', ref);
  }
  bag.discardedFiles += io(() => state.discardInterrupted(), 'cannot delete what an interrupted export left', ref);
  const files: string[] = [];
  let part = 0;
  const target: PartTarget = {
    outDir,
    bagId: ref.bagId,
    hash,
    state,
    rowGroupRows,
    nextPart: () => part++,
    written: (url, path, bytes) => {
      const name = state.relative(path);
      files.push(name);
      report.files++;
      report.bytes += bytes;
      urlReport(report, url).files++;
      options.onFile?.(name);
    },
  };
  const reader = await BagReader.create(ref.location);
  const batches = new Map<string, UrlBatch>();
  // The batches of urls whose structure was widened: written out while the bag is read on.
  const retired: Promise<void>[] = [];
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
            // Every field in every message where the decoder can, so the url's STRUCT (from its first message) has
            // them all; what it cannot (flatbuffers, protobuf's unset message fields) widens it later.
            alwaysEmitImplicit: true,
          });
    let staged = 0;
    let seq = 0;
    // The last frame's url and its batch: consecutive frames of one url skip the map lookups.
    let lastUrl: string | undefined;
    let batch: UrlBatch | undefined;
    if (reader.openCursor({})) {
      for (let frame = reader.next(); frame; frame = reader.next()) {
        if ((seq & YIELD_EVERY) === 0) {
          if ((seq & 1023) === 0) checkAborted(options.signal);
          // Lets the write-outs under way go on: to their next statement, and to the next chunk of the payloads they
          // read from this thread (payload-store.ts). Measured: without it, DuckDB waited for most of a bag's reading
          // and the reader then for DuckDB; an idle event-loop turn costs about a microsecond.
          if (copies.busy) await setImmediate();
        }
        if (frame.url !== lastUrl || batch === undefined) {
          lastUrl = frame.url;
          batch = batches.get(frame.url);
          if (batch === undefined) {
            batch = new UrlBatch(run, frame.url, urlReport(report, frame.url));
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
            if (batch.structure === undefined) batch.structure = structureOf(value);
            else if (VARYING.has(decoded.kind) && !fits(batch.structure, value)) {
              const wider = widen(batch.structure, value);
              if (wider !== batch.structure && batch.widenings < MAX_WIDENINGS) {
                // The rows so far are written out with the structure they fit; the url goes on in a new batch.
                staged -= batch.bytes;
                const old = batch;
                const written = old.finish(target);
                written.catch(() => undefined);
                retired.push(written);
                batch = new UrlBatch(run, frame.url, perUrl, old.widenings + 1);
                batch.structure = wider;
                batches.set(frame.url, batch);
              }
              if (!fits(batch.structure, value)) {
                perUrl.droppedFields++;
                report.droppedFields++;
              }
            }
            if (batch.structure !== undefined) {
              record = value;
              plain = decoded.kind === 'json';
            }
          }
        }
        // Opened after the first message is decoded, so the staging tables know the url's `data` structure.
        if (!batch.ready) {
          await batch.open(plain);
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
        if (batch.rows >= rowGroupRows || batch.bytes >= maxUrlBytes) {
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
    const finishing = Promise.all([...retired, ...closing.map((batch) => batch.finish(target))]);
    const finished = (async () => {
      await finishing;
      bag.messages = seq;
      bag.files = files.length;
      report.messages += seq;
      const marker: DoneMarker = {
        bag_id: ref.bagId,
        location: ref.key,
        // -1: no facts (an object its key's listing does not show, though the reader found it): a later run takes it
        // for gone and keeps these rows, as for a bag deleted since.
        size: facts?.size ?? -1,
        modified_us: facts?.modifiedUs ?? null,
        etag: facts?.etag ?? null,
        messages: seq,
        files,
        exported_at: new Date().toISOString(),
      };
      io(() => state.finish(marker), 'cannot write the done marker of the bag', ref);
    })();
    finished.catch(() => undefined);
    return { bag, finished };
  } finally {
    reader.close();
    // After a failure: drop what was staged (the journal lets the next run delete the parts already written).
    for (const batch of batches.values()) await batch.discard();
  }
}

/** The url's entry of the report, made on first use. */
function urlReport(report: ExportReport, url: string): UrlExportReport {
  let entry = report.perUrl[url];
  if (!entry) {
    entry = { messages: 0, payloadBytes: 0, files: 0, decodeFailures: 0, textReplaced: 0, droppedFields: 0 };
    report.perUrl[url] = entry;
  }
  return entry;
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BagError('ABORTED', 'export stopped; the next run redoes the unfinished bag');
}

/** Runs a step of the export's bookkeeping (deleting parts, writing a marker); a file-system error as a BagError. */
function io<T>(step: () => T, what: string, ref: BagRef): T {
  try {
    return step();
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', what, { file: ref.location });
  }
}
