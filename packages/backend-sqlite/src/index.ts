export { sqliteBackend, createSqliteBackend } from './backend.js';
export type { SqliteBackendOptions } from './backend.js';
export { VdbFileWriter } from './vdb/file-writer.js';
export type { VdbFileOptions } from './vdb/file-writer.js';
export { FileState } from './vdb/file-state.js';
export type { FileUrl, FileSnapshot } from './vdb/file-state.js';
export { VdbRecording, frequency } from './vdb/recording.js';
export type { RecordingUrl } from './vdb/recording.js';
export { VdbReader, readFacts } from './vdb/reader.js';
export type { VdbFacts } from './vdb/reader.js';
export { checkVdb, fixVdb, reindexVdb, tagVdb, verifyVdb } from './vdb/maintenance.js';
export { salvageVdb } from './vdb/salvage.js';
export { salvageSqliteTables } from './vdb/salvage-tables.js';
export type { SalvagedTable, TableSalvage, TableSalvageOptions } from './vdb/salvage-tables.js';
export { guardSqliteFiles } from './vdb/file-guard.js';
export { assertPlainTables } from './vdb/schema-guard.js';
export { trailingBytes, trailingBytesProblem } from './vdb/trailing-bytes.js';
export * as VDB_SQL from './vdb/sql.js';
export { loadDriver, loadNamedDriver, pickDriver, DRIVER_NAMES, isDriverName } from './driver/driver.js';
export type {
  DriverName,
  OpenOptions,
  RunResult,
  SqliteConnection,
  SqliteDriver,
  SqliteStatement,
  SqlRow,
  SqlValue,
} from './driver/driver.js';
export { createVdbxWriter } from './vdbx/vdbx-writer.js';
export type { VdbxWriterOptions } from './vdbx/vdbx-writer.js';
export { openVdbx } from './vdbx/vdbx-reader.js';
export { tagVdbx } from './vdbx/vdbx-tag.js';
