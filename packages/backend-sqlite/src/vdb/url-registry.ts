import {
  type ActionType,
  type BagError,
  type Frame,
  parseSchemaType,
  type RecordingContext,
  resolveSchemaType,
  type SchemaData,
  SchemaType,
  schemaTypeLabel,
  serForAction,
  urlKindOf,
} from '@vlink/bag-core';
import type { SqliteConnection, SqliteStatement } from '../driver/driver.js';
import type { FileState, FileUrl } from './file-state.js';
import type { VdbRecording } from './recording.js';
import * as SQL from './sql.js';
import { checkStorableNames, keptFamily, keptSer, schemaKey, urlFamilyOfSer } from '@vlink/bag-core/internal';

/** How the writer turns a failed statement into its error (rolling back the open batch first). */
export type WriterFailure = (error: unknown, message: string, url?: string) => BagError;

/**
 * The urls and schemas of one `.vdb` file (format reference §2.4–§2.7 steps 6–8): a url's ser and family are checked
 * against what the recording holds (a conflict rejects the frame), the url is registered recording-wide and in this
 * file's `VLinkUrls`, its stored ser/encoding follow what it resolves to, and the schema of each message (an RPC
 * url's request or response half) is embedded once.
 */
export class VdbUrlRegistry {
  private readonly insertUrl: SqliteStatement;
  private readonly updateUrlSer: SqliteStatement;
  private readonly insertSchemaRow: SqliteStatement;

  constructor(
    db: SqliteConnection,
    private readonly path: string,
    private readonly state: FileState,
    private readonly recording: VdbRecording,
    private readonly context: RecordingContext,
    private readonly fail: WriterFailure,
  ) {
    this.insertUrl = db.prepare(SQL.INSERT_URL);
    this.updateUrlSer = db.prepare(SQL.UPDATE_URL_SER);
    this.insertSchemaRow = db.prepare(SQL.INSERT_SCHEMA);
  }

  /** For a url whose (ser, family, action) input is new: check, register, update the stored ser, embed the schema. */
  resolve(fu: FileUrl | undefined, frame: Frame, action: ActionType): FileUrl {
    const url = frame.url;
    const rec0 = fu?.rec ?? this.recording.urls.get(url);
    const inSer = frame.serType;
    const place = { file: this.path, url };
    checkStorableNames(url, inSer, place);
    const ser = keptSer(rec0 ? rec0.ser : '', inSer, place);
    const type = keptFamily(
      rec0 ? rec0.schemaType : SchemaType.Unknown,
      urlFamilyOfSer(ser, frame.schemaType, action),
      place,
    );

    try {
      let rec = rec0;
      if (rec === undefined) rec = this.recording.addUrl(url, urlKindOf(action), ser, type);
      else {
        rec.ser = ser;
        rec.schemaType = type;
      }
      if (fu === undefined) {
        this.insertUrl.run(rec.index, url, urlKindOf(action), ser, schemaTypeLabel(type), 0, 0, 0, 0);
        fu = {
          rec,
          id: rec.index,
          url,
          count: 0,
          size: 0,
          firstTs: -1,
          lastTs: -1,
          rowSer: ser,
          rowType: type,
          memoSer: inSer,
          memoType: frame.schemaType,
          memoActions: 0,
        };
        this.state.urls.set(url, fu);
        this.state.byId.set(rec.index, fu);
      } else if (fu.rowSer !== ser || fu.rowType !== type) {
        this.updateUrlSer.run(ser, schemaTypeLabel(type), url);
        fu.rowSer = ser;
        fu.rowType = type;
      }
      // The schema of this message: for RPC, the request or response half of `Req|Resp` (format reference §2.6).
      const half = serForAction(ser, action);
      if (half !== '') {
        const halfFamily = resolveSchemaType(frame.schemaType, half);
        const key = schemaKey(half, halfFamily);
        if (!this.state.schemaKeys.has(key)) {
          const schema = this.context.resolveSchema(half, halfFamily);
          if (schema) this.insertSchema(schema, halfFamily);
        }
      }
    } catch (error) {
      throw this.fail(error, 'cannot register url', url);
    }
    if (fu.memoSer !== inSer || fu.memoType !== frame.schemaType) {
      fu.memoSer = inSer;
      fu.memoType = frame.schemaType;
      fu.memoActions = 0;
    }
    fu.memoActions |= 1 << action;
    return fu;
  }

  /** VLink `push_schema` for this file: inserts the schema unless this file already has it (format reference §2.5). */
  insertSchema(schema: SchemaData, family: SchemaType): void {
    const ownFamily = schema.schemaType !== SchemaType.Unknown ? schema.schemaType : parseSchemaType(schema.encoding);
    const key = schemaKey(schema.name, ownFamily === SchemaType.Unknown ? family : ownFamily);
    if (this.state.schemaKeys.has(key)) return;
    const encoding = schema.encoding || schemaTypeLabel(ownFamily === SchemaType.Unknown ? family : ownFamily);
    // VLink writes a schema row only when name, encoding and data are all non-empty.
    if (!schema.name || !encoding || schema.data.length === 0) return;
    try {
      this.insertSchemaRow.run(schema.name, encoding, schema.data);
    } catch (error) {
      throw this.fail(error, `cannot insert schema ${schema.name}`);
    }
    this.state.schemaKeys.add(key);
    this.state.schemaKeys.add(schemaKey(schema.name, family));
  }
}
