import {
  BagError,
  extensionOf,
  type Backend,
  type BackendReader,
  type BackendWriter,
  type ByteSource,
  type ReaderOptions,
  type RecordingContext,
  type ResolvedWriterConfig,
  type SalvageOptions,
} from '@vlink/bag-core';
import { urlSplitFiles } from '@vlink/bag-core/internal';
import { loadDriver, type SqliteDriver } from './driver/driver.js';
import { VdbFileWriter } from './vdb/file-writer.js';
import { tagVdb } from './vdb/maintenance.js';
import { openVdbReader } from './vdb/read-around.js';
import { salvageVdb } from './vdb/salvage.js';
import { guardSqliteFiles } from './vdb/file-guard.js';
import { VdbRecording } from './vdb/recording.js';
import { openVdbx } from './vdbx/vdbx-reader.js';
import { tagVdbx } from './vdbx/vdbx-tag.js';
import { createVdbxWriter } from './vdbx/vdbx-writer.js';

export interface SqliteBackendOptions {
  /** A driver, or a loader; default: `loadDriver()` (bun:sqlite → node:sqlite → better-sqlite3). */
  driver?: SqliteDriver | (() => Promise<SqliteDriver>);
  /**
   * `Backend.workerModule`: a module exporting an equivalent backend that a worker can import on its own. Only the
   * default `sqliteBackend` sets it (this module); a backend built around an injected driver stays same-thread.
   */
  workerModule?: string;
}

/** Builds the `.vdb`/`.vdbx` backend around a driver; `sqliteBackend` is the default instance. */
export function createSqliteBackend(options: SqliteBackendOptions = {}): Backend {
  const given = options.driver;
  const driver = (): Promise<SqliteDriver> =>
    given === undefined ? loadDriver() : typeof given === 'function' ? given() : Promise.resolve(given);
  return {
    name: 'sqlite',
    extensions: ['.vdb', '.vdbx'],
    ...(options.workerModule === undefined ? {} : { workerModule: options.workerModule }),
    async createWriter(path: string, config: ResolvedWriterConfig, context: RecordingContext): Promise<BackendWriter> {
      const split = assertVdb(path);
      const d = await driver();
      if (split) return createVdbxWriter(d, path, config, context);
      return VdbFileWriter.open(d, path, config, context, new VdbRecording(config));
    },
    async openReader(path: string, options: ReaderOptions): Promise<BackendReader> {
      if (assertVdb(path)) return openVdbx(await driver(), path, options);
      await guardSqliteFiles(path, options, 'bag');
      return openVdbReader(await driver(), path, options);
    },
    /**
     * Behind a url (e.g. `s3://`): a `.vdb` through the source's local copy (SQLite needs a file); a `.vdbx` with its
     * manifest read from the source and each segment copied when it is opened.
     */
    async openSource(source: ByteSource, options: ReaderOptions): Promise<BackendReader> {
      try {
        if (assertVdb(source.name))
          return await openVdbx(await driver(), source.name, { ...options, files: await urlSplitFiles(source) });
        if (!source.localCopy)
          throw new BagError('NOT_SUPPORTED', 'a .vdb is read from local files, and this source has no local copy', {
            file: source.name,
          });
        return openVdbReader(await driver(), await source.localCopy('.vdb'), options);
      } finally {
        source.close();
      }
    },
    /** A repaired copy of one `.vdb` (`repairBag`); `.vdbx` recordings are repaired segment by segment by core. */
    async salvage(source: string, target: string, options?: SalvageOptions) {
      if (assertVdb(source)) throw new BagError('INVALID_ARGUMENT', 'salvage takes one .vdb file', { file: source });
      return salvageVdb(await driver(), source, target, options?.onProgress);
    },
    async tag(path: string, name: string): Promise<boolean> {
      if (assertVdb(path)) return tagVdbx(await driver(), path, name);
      return tagVdb(await driver(), path, name);
    },
  };
}

/** True for a split recording (`.vdbx`), false for `.vdb`; throws for anything else. */
function assertVdb(path: string): boolean {
  const ext = extensionOf(path);
  if (ext !== '.vdb' && ext !== '.vdbx') {
    throw new BagError(
      'UNSUPPORTED_FORMAT',
      `the sqlite backend handles .vdb and .vdbx files, not "${ext || '(none)'}"`,
      {
        file: path,
      },
    );
  }
  return ext === '.vdbx';
}

/** The VLink `.vdb`/`.vdbx` backend with the runtime's SQLite driver. */
export const sqliteBackend: Backend = createSqliteBackend({ workerModule: import.meta.url });
