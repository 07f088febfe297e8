import { mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { actionText } from '@vlink/bag';
import { BagError } from '@vlink/bag-core';
import type { DecodableFrame, PayloadDecoder } from '@vlink/bag-decode';
import type { CopyQueue } from './copy-queue.js';
import { sqlString } from './duckdb.js';
import type { BagExportState } from './export-state.js';
import { recordJson, type Structure, withoutLoneSurrogates } from './data-structure.js';
import type { UrlExportReport } from './export-messages.js';
import { partName, partitionDir, utcDate } from './paths.js';
import { PAYLOAD_FUNCTION, type PayloadSource, type PayloadStore } from './payload-store.js';
import { type RawJsonCheck, rawJsonCheck } from './raw-json.js';
import { DataSource, STAGING_COLUMNS, StagingChunk } from './staging-chunk.js';
import { type StagedRows, type StagedRowsSet, stagedRowsSql } from './staged-rows.js';
import type { StagingTables } from './staging-tables.js';
import { type TypedData, typedData } from './typed-data.js';

const DAY_US = 86_400_000_000;

/** Where a url's batch goes and how its row groups are sized. */
export interface PartTarget {
  /** Absolute. */
  outDir: string;
  bagId: string;
  hash: string;
  state: BagExportState;
  rowGroupRows: number;
  /** The next part number of the bag (shared by its urls, so names never collide). */
  nextPart: () => number;
  /** Called with each part written: its path and size in bytes. */
  written: (url: string, path: string, bytes: number) => void;
}

/** What the batches of an export share: the reader's connection, the write-outs, the payloads, the tables. */
export interface BatchContext {
  connection: DuckDBConnection;
  copies: CopyQueue;
  payloads: PayloadSource;
  /** Where the rows of batches without a typed `data` column are staged instead of in tables (staged-rows.ts). */
  rows: StagedRowsSet;
  tables: StagingTables;
}

const encoder = new TextEncoder();

/**
 * The staged messages of one url of one bag, only what varies per message (seq, times as µs, an index into the url's
 * (action, ser) pairs, the payload, the decoded fields as JSON): in a StagedRows (staged-rows.ts), or, when the url's
 * `data` has a typed writer (typed-data.ts), in a DuckDB table filled through an appender, with the typed `data` and
 * the payloads in a PayloadStore (payload-store.ts). The constant columns and the `data` STRUCT are made by the
 * `COPY … TO parquet` that writes them out, one part file per UTC date the batch spans (usually one). Two sets of
 * rows (tables) take turns: while DuckDB writes one out (on its own connection, in its own threads) the reader fills
 * the other, so reading and decoding overlap the Parquet writing.
 */
export class UrlBatch {
  readonly url: string;
  rows = 0;
  bytes = 0;
  /** The `data` structure; undefined until a message decodes, then fixed for the url in this bag. */
  structure: Structure | undefined;
  /** Its two staging tables, taken when it is opened. */
  private tables: [string, string] | undefined;
  private current = 0;
  private appender: DuckDBAppender | undefined;
  /** Rows on their way into the current table, a data chunk at a time. */
  private staging: StagingChunk | undefined;
  /** The payloads of the current table's rows, made with its first row. */
  private payloads: PayloadStore | undefined;
  /** Without a typed `data` column the rows are staged here, not in tables (made with the first row). */
  private tableless = false;
  private staged: StagedRows | undefined;
  /** The typed writer of the `data` STRUCT, when the structure was known at {@link open} and has one. */
  private typed: TypedData | undefined;
  /**
   * Whether a JSON payload can be staged as its own `data` (raw-json.ts), when the structure was known at
   * {@link open} and has such a check.
   */
  rawJson: RawJsonCheck | undefined;
  /** Whether the row being added is a JSON payload's record, and the length of the JSON text it was given. */
  private plain = false;
  private jsonLength = 0;
  private readonly json = (record: unknown): string => {
    let text = recordJson(record as Record<string, unknown>, this.plain);
    const wellFormed = withoutLoneSurrogates(text);
    if (wellFormed !== undefined) {
      text = wellFormed;
      this.report.textReplaced++;
    }
    this.jsonLength = text.length;
    return text;
  };
  private readonly kinds = new Map<string, number>();
  private readonly actions: string[] = [];
  private readonly sers: string[] = [];
  /** The (action type, ser) of the last row and its kind: a url's rows nearly always share them. */
  private lastAction = -1;
  private lastSer = '';
  private lastKind = 0;
  /** The (ser, action type, family) of the last frame {@link isJson} looked at, and whether its payload is JSON. */
  private jsonSer = '';
  private jsonAction = -1;
  private jsonFamily = -1;
  private payloadIsJson = false;
  /** Staged rows per UTC day number. */
  private days = new Map<number, number>();
  /** The day of the last row: rows are in time order, so the map is updated only when the day changes. */
  private lastDay = Number.NaN;
  private lastDayRows = 0;
  /** The write-out of the other table, if one is under way. */
  private pending: Promise<void> | undefined;

  private readonly connection: DuckDBConnection;
  private readonly writer: CopyQueue;
  private readonly source: PayloadSource;

  constructor(
    private readonly context: BatchContext,
    url: string,
    /** The url's entry of the export report (counted by the caller). */
    readonly report: UrlExportReport,
    /** How many batches of the url in this bag came before this one, each ended by widening its structure. */
    readonly widenings = 0,
  ) {
    this.url = url;
    this.connection = context.connection;
    this.writer = context.copies;
    this.source = context.payloads;
  }

  /**
   * Readies the staging: with the url's {@link structure} known and a typed writer for it, two tables with a typed
   * `data` column; else StagedRows. JSON payloads (`jsonPayloads`) that {@link rawJson} can check need no typed
   * writer: those rows are their own `data`, and the few the check refuses are staged as JSON text, which gives the
   * same `data` (typed-data.ts). (A typed column of NULLs cost the appender as much as the rest of the row.)
   */
  async open(jsonPayloads = false): Promise<void> {
    this.rawJson = this.structure === undefined ? undefined : rawJsonCheck(this.structure);
    const typed = jsonPayloads && this.rawJson !== undefined;
    this.typed = this.structure === undefined || typed ? undefined : typedData(this.structure);
    if (this.typed === undefined) {
      this.tableless = true;
      return;
    }
    const data = `, data ${this.typed.type}`;
    this.tables = await this.context.tables.take(`${STAGING_COLUMNS}${data}`);
    const appender = await this.connection.createAppender(this.tables[this.current]!);
    this.appender = appender;
    const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
    this.staging = new StagingChunk(types, this.typed);
  }

  get ready(): boolean {
    return this.appender !== undefined || this.tableless;
  }

  /**
   * Stages one message (call {@link open} first); `payload` is copied. `record` is the decoded message as its `data`
   * (undefined for none), `plain` says it came from JSON text; `dataInPayload` says the payload is JSON text that
   * {@link rawJson} accepted, to be its own `data` (no record then). Returns the bytes it adds to {@link bytes}.
   */
  append(
    seq: number,
    logUs: number,
    pubUs: number | undefined,
    actionType: number,
    ser: string,
    payload: Uint8Array,
    record: Record<string, unknown> | undefined,
    plain: boolean,
    dataInPayload = false,
  ): number {
    const kind = actionType === this.lastAction && ser === this.lastSer ? this.lastKind : this.kindOf(actionType, ser);
    this.plain = plain;
    this.jsonLength = 0;
    const source = dataInPayload ? DataSource.Payload : record === undefined ? DataSource.None : DataSource.Record;
    if (this.tableless) {
      const text = source === DataSource.Record ? encoder.encode(this.json(record)) : undefined;
      (this.staged ??= this.context.rows.rows()).add(seq, logUs, pubUs, kind, payload, dataInPayload, text);
    } else {
      const ref = (this.payloads ??= this.source.store()).add(payload);
      if (this.staging!.add(seq, logUs, pubUs, kind, ref, source, record, this.json)) {
        this.staging!.appendTo(this.appender!);
      }
    }
    this.rows++;
    const data = record === undefined ? 0 : this.jsonLength > 0 ? this.jsonLength : (this.typed?.rowBytes ?? 0);
    const added = payload.byteLength + data + 48;
    this.bytes += added;
    const day = Math.floor(logUs / DAY_US);
    if (day === this.lastDay) this.lastDayRows++;
    else {
      this.countDay();
      this.lastDay = day;
      this.lastDayRows = 1;
    }
    return added;
  }

  /** Moves the rows of the last day into {@link days}. */
  private countDay(): void {
    if (this.lastDayRows > 0) this.days.set(this.lastDay, (this.days.get(this.lastDay) ?? 0) + this.lastDayRows);
    this.lastDay = Number.NaN;
    this.lastDayRows = 0;
  }

  /** Whether the decoder reads the frame's payload as JSON (asked again only when the frame's kind changes). */
  isJson(frame: DecodableFrame, decoder: PayloadDecoder): boolean {
    if (
      frame.serType !== this.jsonSer ||
      frame.actionType !== this.jsonAction ||
      frame.schemaType !== this.jsonFamily
    ) {
      this.jsonSer = frame.serType;
      this.jsonAction = frame.actionType;
      this.jsonFamily = frame.schemaType;
      this.payloadIsJson = decoder.encodingOf(frame) === 'json';
    }
    return this.payloadIsJson;
  }

  private kindOf(actionType: number, ser: string): number {
    const action = actionText(actionType);
    const key = `${action}\u0000${ser}`;
    let kind = this.kinds.get(key);
    if (kind === undefined) {
      kind = this.actions.length;
      this.kinds.set(key, kind);
      this.actions.push(action);
      this.sers.push(ser);
    }
    this.lastAction = actionType;
    this.lastSer = ser;
    this.lastKind = kind;
    return kind;
  }

  /**
   * Starts writing the staged rows out and switches to the other table; returns once the other table is free again
   * (its previous write-out finished), so at most two batches of a url are held.
   */
  async flush(target: PartTarget): Promise<void> {
    if (this.rows === 0) return;
    const previous = this.pending;
    const written = this.seal(target);
    // Awaited by the next flush, finish or discard; a failure surfaces there. Handled before anything is awaited: when
    // the previous write-out failed, the await below throws, and this one's failure must not be an unhandled
    // rejection (Node ends the process on one).
    written.catch(() => undefined);
    this.pending = written;
    if (previous) await previous;
    if (!this.tableless) this.appender = await this.connection.createAppender(this.tables![this.current]!);
  }

  /**
   * Ends the url's batch: the staged rows are written out and both tables dropped, all on the write-out connection,
   * so the reader's connection is free for the next bag at once (DuckDB connections run one operation at a time).
   */
  finish(target: PartTarget): Promise<void> {
    const previous = this.pending;
    this.pending = undefined;
    const written = this.rows > 0 ? this.seal(target, false) : undefined;
    this.appender?.closeSync();
    this.appender = undefined;
    this.payloads?.release();
    this.payloads = undefined;
    const tables = this.tables;
    if (tables === undefined) return Promise.all([previous, written]).then(() => undefined);
    // Queued now (so the queue's close waits for it) but dropping only after both tables' write-outs, which are queued
    // before it and may still run on another lane (CopyQueue.addLane).
    const writes = Promise.all([previous, written]);
    const dropped = this.writer.run(async (copier) => {
      await writes.catch(() => undefined);
      for (const table of tables) await copier.run(`DROP TABLE IF EXISTS ${table}`);
    });
    return Promise.all([writes, dropped]).then(() => undefined);
  }

  /**
   * Queues the write-out of the staged rows: the current StagedRows, or the current table (its appender closed; the
   * next rows go to the other table, with no appender yet). The table is emptied after its write-out when it is to be
   * filled again (`reused`), else it is dropped (finish).
   */
  private seal(target: PartTarget, reused = true): Promise<void> {
    this.countDay();
    const days = this.days;
    const select = this.selectList();
    this.days = new Map();
    this.rows = 0;
    this.bytes = 0;
    if (this.tableless) {
      // The rows, for the write-out to read and let go of when it is over.
      const rows = this.staged!;
      rows.seal();
      this.staged = undefined;
      return this.writer.run(async (copier) => {
        try {
          await this.writeOut(copier, target, days, select, stagedRowsSql(rows));
        } finally {
          rows.release();
        }
      });
    }
    this.staging!.appendTo(this.appender!);
    this.appender!.closeSync();
    this.appender = undefined;
    const table = this.tables![this.current]!;
    // The rows' payloads, for the write-out to read and let go of when it is over (its table is the next but one).
    const payloads = this.payloads!;
    payloads.seal();
    this.payloads = undefined;
    const staged = `(SELECT *, ${PAYLOAD_FUNCTION}(${payloads.id}::UINTEGER, payload_ref) AS payload_bytes FROM ${table})`;
    this.current = 1 - this.current;
    return this.writer.run(async (copier) => {
      try {
        await this.writeOut(copier, target, days, select, staged);
        if (reused) await copier.run(`TRUNCATE ${table}`);
      } finally {
        payloads.release();
      }
    });
  }

  /** Writes the staged rows of each day of `days` into a part file of that day. */
  private async writeOut(
    copier: DuckDBConnection,
    target: PartTarget,
    days: Map<number, number>,
    select: string,
    staged: string,
  ): Promise<void> {
    for (const [day] of [...days].sort((a, b) => a[0] - b[0])) {
      const date = utcDate(day * DAY_US);
      const dir = partitionDir(target.outDir, this.url, date);
      const path = join(dir, partName(target.hash, target.nextPart()));
      try {
        const temporary = target.state.willWrite(path);
        mkdirSync(dir, { recursive: true });
        // All the rows are of this day when the batch spans one (a filter would evaluate vlink_row twice).
        const where = days.size > 1 ? ` WHERE log_us >= ${day * DAY_US} AND log_us < ${(day + 1) * DAY_US}` : '';
        const query =
          `SELECT ${sqlString(target.bagId)} AS bag_id, ${sqlString(this.url)} AS url, ${sqlString(date)} AS date, ${select} ` +
          `FROM ${staged}${where}`;
        await copier.run(
          `COPY (${query}) TO ${sqlString(temporary)} (FORMAT parquet, ROW_GROUP_SIZE ${target.rowGroupRows})`,
        );
        renameSync(temporary, path);
        target.written(this.url, path, statSync(path).size);
      } catch (error) {
        // A full disk, a file where a folder must go, DuckDB's own failure: one typed error naming the part.
        throw BagError.wrap(error, 'IO_ERROR', `cannot write the part file of url ${this.url}`, { file: path });
      }
    }
  }

  /** The columns after bag_id, url and date, as SELECT items over a staging table. */
  private selectList(): string {
    const actions = `[${this.actions.map(sqlString).join(', ')}]`;
    const sers = `[${this.sers.map(sqlString).join(', ')}]`;
    // Rows whose payload is their JSON text are converted from it; rows the typed writer filled have no JSON text;
    // the others are converted from their record's JSON text as json_transform does.
    const structure = this.structure === undefined ? '' : sqlString(JSON.stringify(this.structure));
    const fromPayload = `WHEN data_in_payload THEN json_transform(decode(payload_bytes), ${structure})`;
    const data =
      this.structure === undefined
        ? ''
        : `, CASE ${fromPayload} WHEN data_json IS NULL THEN ${this.typed === undefined ? 'NULL' : 'data'} ` +
          `ELSE json_transform(data_json, ${structure}) END AS data`;
    return (
      `${actions}[kind + 1] AS action, ${sers}[kind + 1] AS ser, seq::BIGINT AS seq, ` +
      'make_timestamp(log_us::BIGINT) AS log_time, make_timestamp(pub_us::BIGINT) AS publish_time, ' +
      `octet_length(payload_bytes)::INTEGER AS size, payload_bytes AS payload${data}`
    );
  }

  /** Drops the staged rows without writing them (after a failure: waits for a write-out under way first). */
  async discard(): Promise<void> {
    await this.pending?.catch(() => undefined);
    this.pending = undefined;
    this.staging?.clear();
    try {
      this.appender?.closeSync();
    } catch {
      // its table is dropped next anyway
    }
    this.appender = undefined;
    this.payloads?.release();
    this.payloads = undefined;
    this.staged?.release();
    this.staged = undefined;
    // Never thrown: the caller is handling the failure that made it discard, which is the one to report.
    for (const table of this.tables ?? []) {
      await this.connection.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    }
  }
}
