import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ActionType, BagError, type Frame, SchemaType } from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver, SqliteStatement, SqlValue } from '../driver/driver.js';

/** A fresh temp dir for one test file; `cleanup()` removes it (call from `after`). */
export function tempDir(prefix: string): { dir: string; path(name: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), `vlink-sqlite-${prefix}-`));
  let n = 0;
  return {
    dir,
    path: (name: string) => join(dir, `${n++}-${name}`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Bytes 0..n-1 modulo 251 (compressible enough, never all zero). */
export function pattern(n: number, seed = 0): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i + seed) % 251;
  return out;
}

/** Deterministic incompressible bytes (xorshift). */
export function noise(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed | 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export interface SpyLog {
  /** Every `exec` text and every statement `run` as `run: <sql>`, in order. */
  calls: string[];
}

/**
 * Wraps a driver to record what the backend executes and to inject failures: `failWhen(sql, params)` returning
 * true makes that statement's `run` throw like a full disk would.
 */
export function spyDriver(
  base: SqliteDriver,
  failWhen: (sql: string, params: SqlValue[]) => boolean = () => false,
): { driver: SqliteDriver; log: SpyLog } {
  const log: SpyLog = { calls: [] };
  const driver: SqliteDriver = {
    name: base.name,
    open(path, options) {
      const db = base.open(path, options);
      const conn: SqliteConnection = {
        driver: db.driver,
        defensive: db.defensive,
        exec(sql) {
          log.calls.push(sql);
          db.exec(sql);
        },
        prepare(sql): SqliteStatement {
          const s = db.prepare(sql);
          return {
            run(...params) {
              log.calls.push(`run: ${sql}`);
              if (failWhen(sql, params)) throw Object.assign(new Error('database or disk is full'), { errcode: 13 });
              return s.run(...params);
            },
            get: s.get,
            all: s.all,
            iterate: s.iterate,
            finalize: s.finalize,
          };
        },
        close: () => db.close(),
      };
      return conn;
    },
  };
  return { driver, log };
}

/** Runs `fn` with a plain connection to `path` (for inspecting or hand-building files). */
export function withDb<T>(driver: SqliteDriver, path: string, fn: (db: SqliteConnection) => T, readOnly = false): T {
  const db = driver.open(path, { readOnly });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** A Raw Pub frame, the shape most .vdb tests write (`more` overrides any field). */
export function rawFrame(timestamp: number, url: string, data: Uint8Array, more: Partial<Frame> = {}): Frame {
  return { timestamp, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish, ...more };
}

/** Asserts `fn` throws a BagError with this code and reason (and file/url when given). */
export function refused(
  fn: () => unknown,
  code: string,
  reason: string,
  more: { file?: string; url?: string } = {},
): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, code);
    assert.equal(error.reason, reason);
    if ('file' in more) assert.equal(error.file, more.file);
    if ('url' in more) assert.equal(error.url, more.url);
    return true;
  });
}
