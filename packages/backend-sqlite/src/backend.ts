import {
  BagError,
  extensionOf,
  type Backend,
  type BackendReader,
  type BackendWriter,
  type ReaderOptions,
  type RecordingContext,
  type ResolvedWriterConfig,
} from '@vlink/bag-core';
import { loadDriver, type SqliteDriver } from './driver/driver.js';
import { VdbFileWriter } from './vdb/file-writer.js';
import { tagVdb } from './vdb/maintenance.js';
import { VdbReader } from './vdb/reader.js';
import { VdbRecording } from './vdb/recording.js';

export interface SqliteBackendOptions {
  /** A driver, or a loader; default: `loadDriver()` (bun:sqlite → node:sqlite → better-sqlite3). */
  driver?: SqliteDriver | (() => Promise<SqliteDriver>);
  /**
   * `Backend.workerModule`: a module exporting an equivalent backend that a worker can import on its own. Only the
   * default `sqliteBackend` sets it (this module); a backend built around an injected driver stays same-thread.
   */
  workerModule?: string;
}

/** Builds the `.vdb` backend around a driver; `sqliteBackend` is the default instance. */
export function createSqliteBackend(options: SqliteBackendOptions = {}): Backend {
  const given = options.driver;
  const driver = (): Promise<SqliteDriver> =>
    given === undefined ? loadDriver() : typeof given === 'function' ? given() : Promise.resolve(given);
  return {
    name: 'sqlite',
    extensions: ['.vdb'],
    ...(options.workerModule === undefined ? {} : { workerModule: options.workerModule }),
    async createWriter(path: string, config: ResolvedWriterConfig, context: RecordingContext): Promise<BackendWriter> {
      assertVdb(path);
      const d = await driver();
      return VdbFileWriter.open(d, path, config, context, new VdbRecording(config));
    },
    async openReader(path: string, options: ReaderOptions): Promise<BackendReader> {
      assertVdb(path);
      return VdbReader.open(await driver(), path, options);
    },
    async tag(path: string, name: string): Promise<boolean> {
      assertVdb(path);
      return tagVdb(await driver(), path, name);
    },
  };
}

function assertVdb(path: string): void {
  if (extensionOf(path) !== '.vdb') {
    throw new BagError('UNSUPPORTED_FORMAT', `the sqlite backend handles .vdb files, not "${extensionOf(path) || '(none)'}"`, {
      file: path,
    });
  }
}

/** The VLink `.vdb` backend with the runtime's SQLite driver. */
export const sqliteBackend: Backend = createSqliteBackend({ workerModule: import.meta.url });
