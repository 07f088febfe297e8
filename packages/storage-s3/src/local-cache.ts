import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import type { S3Object } from './s3-object.js';

/** Where copies go and how much they may take; `VLINK_S3_CACHE_DIR` / `VLINK_S3_CACHE_BYTES` set the defaults. */
export interface LocalCacheOptions {
  /** Default `$VLINK_S3_CACHE_DIR`, else `<tmpdir>/vlink-s3-cache`. */
  cacheDir?: string;
  /** Total bytes of copies kept (least recently used removed first); default `$VLINK_S3_CACHE_BYTES`, else 4 GiB. */
  maxCacheBytes?: number;
}

/** Bytes per ranged GET while copying (bounded memory whatever the object's size). */
const PIECE_BYTES = 8 * 1024 * 1024;

/**
 * A local copy of an object, for formats that need a file (SQLite `.vdb`): named by the url, size and ETag, so a
 * changed object is fetched again; reused (and marked recently used) while it is there; written to a temporary name
 * and renamed, so a crash leaves no half copy; then the cache is trimmed to its bound, oldest use first (the copy just
 * made is kept even when it alone exceeds the bound).
 */
export async function localCopy(object: S3Object, extension: string, options: LocalCacheOptions = {}): Promise<string> {
  const place = cachePlace(object, extension, options);
  if (reuse(place.path, object.size)) return place.path;
  return fill(place, object, async (offset, length) => object.read(offset, length));
}

/**
 * `localCopy` done at once, each piece read with `read` (a byte source's synchronous ranged GET): a split
 * recording's `.vdb` segment opened when a synchronous read reaches it. The same names, bound and trimming.
 */
export function localCopySync(
  object: S3Object,
  read: (offset: number, length: number) => Uint8Array,
  extension: string,
  options: LocalCacheOptions = {},
): string {
  const place = cachePlace(object, extension, options);
  if (reuse(place.path, object.size)) return place.path;
  const copy = new PartialCopy(place, object);
  try {
    for (let offset = 0; offset < object.size; offset += PIECE_BYTES) {
      copy.write(offset, read(offset, Math.min(PIECE_BYTES, object.size - offset)));
    }
  } catch (error) {
    copy.abandon(error);
  }
  return copy.keep();
}

interface CachePlace {
  dir: string;
  bound: number;
  path: string;
}

/** Where the copy of this object version goes, and the cache's bound. */
function cachePlace(object: S3Object, extension: string, options: LocalCacheOptions): CachePlace {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  const dir = options.cacheDir ?? env['VLINK_S3_CACHE_DIR'] ?? join(tmpdir(), 'vlink-s3-cache');
  const bound = options.maxCacheBytes ?? (Number(env['VLINK_S3_CACHE_BYTES']) || 4 * 1024 ** 3);
  mkdirSync(dir, { recursive: true });
  const id = createHash('sha256').update(`${object.url}\n${object.size}\n${object.etag}`).digest('hex').slice(0, 32);
  return { dir, bound, path: join(dir, `${id}${extension}`) };
}

/** True (and the copy marked recently used) when the cache holds the copy already. */
function reuse(path: string, size: number): boolean {
  if (!existsSync(path) || statSync(path).size !== size) return false;
  const now = new Date();
  utimesSync(path, now, now);
  return true;
}

async function fill(
  place: CachePlace,
  object: S3Object,
  read: (offset: number, length: number) => Promise<Uint8Array>,
): Promise<string> {
  const copy = new PartialCopy(place, object);
  try {
    for (let offset = 0; offset < object.size; offset += PIECE_BYTES) {
      copy.write(offset, await read(offset, Math.min(PIECE_BYTES, object.size - offset)));
    }
  } catch (error) {
    copy.abandon(error);
  }
  return copy.keep();
}

/**
 * A copy being written under a temporary `.part` name, the one place of the cache's write protocol for both the
 * synchronous and the asynchronous fill: `abandon` removes the part and throws, `keep` renames it into place and
 * trims the cache.
 */
class PartialCopy {
  private readonly temp: string;
  private readonly fd: number;

  constructor(
    private readonly place: CachePlace,
    private readonly object: S3Object,
  ) {
    this.temp = `${place.path}.${globalThis.crypto.randomUUID()}.part`;
    this.fd = openSync(this.temp, 'w');
  }

  write(offset: number, piece: Uint8Array): void {
    writeSync(this.fd, piece, 0, piece.length, offset);
  }

  abandon(error: unknown): never {
    closeSync(this.fd);
    rmSync(this.temp, { force: true });
    throw BagError.wrap(error, 'IO_ERROR', 'cannot copy the object into the local cache', { file: this.object.url });
  }

  keep(): string {
    closeSync(this.fd);
    renameSync(this.temp, this.place.path);
    trim(this.place.dir, this.place.bound, this.place.path);
    return this.place.path;
  }
}

function trim(dir: string, bound: number, keep: string): void {
  const files = readdirSync(dir)
    .filter((name) => !name.endsWith('.part'))
    .map((name) => join(dir, name))
    .map((path) => ({ path, stat: statSync(path) }))
    .filter((f) => f.stat.isFile())
    .sort((a, b) => a.stat.mtimeMs - b.stat.mtimeMs);
  let total = files.reduce((sum, f) => sum + f.stat.size, 0);
  for (const f of files) {
    if (total <= bound) break;
    if (f.path === keep) continue;
    rmSync(f.path, { force: true });
    total -= f.stat.size;
  }
}
