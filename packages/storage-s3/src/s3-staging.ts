import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BagError, type UrlStaging } from '@vlink/bag-core';
import type { S3Client } from './s3-client.js';
import { parseS3Url } from './s3-location.js';
import { type UploadOptions, uploadFile } from './s3-upload.js';

export interface StagingOptions extends UploadOptions {
  /** Where recordings are written before they go up; default `$VLINK_S3_STAGING_DIR`, else `<tmpdir>`. */
  stagingDir?: string;
}

/** Files a writer leaves beside a segment while it is open (SQLite journals) or while it replaces one (`.tmp`). */
const TRANSIENT = /(\.tmp|-wal|-shm|-journal)$/;

/**
 * A recording written to `s3://bucket/dir/name.ext`: the backend writes `<staging>/name.ext` (and its segments
 * beside it); each segment goes up as soon as the writer has moved past it, one upload at a time; `commit()` uploads
 * the rest with the bag file or manifest last, so a reader never finds a manifest listing a segment that is not there
 * yet. A failed upload rejects `commit()` naming the staging directory, which is kept with every byte recorded.
 */
export function stageS3(client: S3Client, url: string, options: StagingOptions = {}): UrlStaging {
  const { bucket, key } = parseS3Url(url);
  const slash = key.lastIndexOf('/');
  const prefix = key.slice(0, slash + 1);
  const name = key.slice(slash + 1);
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  const root = options.stagingDir ?? env['VLINK_S3_STAGING_DIR'] ?? tmpdir();
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(join(root, 'vlink-upload-'));
  const localPath = join(dir, name);
  const started = new Set<string>();
  let queue: Promise<void> = Promise.resolve();
  let failure: unknown;

  const upload = (file: string): void => {
    started.add(file);
    queue = queue.then(async () => {
      if (failure !== undefined) return;
      try {
        await uploadFile(client, join(dir, file), { bucket, key: prefix + file }, options);
      } catch (error) {
        failure = error;
      }
    });
  };
  const pending = (except: readonly string[]): string[] =>
    readdirSync(dir)
      .filter((file) => !started.has(file) && !except.includes(file) && !TRANSIENT.test(file))
      .sort();
  const kept = (error: unknown): BagError => {
    const detail = error instanceof Error ? error.message : String(error);
    return new BagError(
      BagError.isInstance(error) ? error.code : 'IO_ERROR',
      `the recording did not reach ${url} (${detail}); it is kept at ${dir}`,
      { file: url, cause: error },
    );
  };

  return {
    localPath,
    segmentClosed(closed) {
      const file = basename(closed);
      if (!started.has(file) && file !== name) upload(file);
    },
    async commit() {
      for (const file of pending([name])) upload(file);
      upload(name);
      await queue;
      if (failure !== undefined) throw kept(failure);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
