import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { s3TestServer } from '@vlink/fixtures/s3';
import { S3ByteSource } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { parseS3Url } from './s3-location.js';

/**
 * `S3ByteSource.openSync` and `localCopySync` (a split recording's segment opened when a synchronous read reaches it)
 * against a real S3 server (moto): the same request, bytes and cache as the asynchronous open and copy.
 */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-s3-sync-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const bytesOf = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => ((i + seed) * 2_654_435_761) >>> 24);
const first = bytesOf(700 * 1024 + 5, 1);
const second = bytesOf(600 * 1024 + 9, 2);

describe('S3ByteSource opened at once', { skip }, () => {
  const options = () => s3Options({ cacheDir: join(dir, 'cache'), tailBytes: 64 * 1024 });
  before(async () => {
    const client = new S3Client(s3Options());
    await client.createBucket('sync');
    await client.put(parseS3Url('s3://sync/a.vdb'), first);
    await client.put(parseS3Url('s3://sync/b.vdb'), second);
    await client.put(parseS3Url('s3://sync/small.vcap'), first.subarray(0, 1000));
  });

  test('an object smaller than the tail asked for: its size and every byte, from the one request', () => {
    const source = S3ByteSource.openSync('s3://sync/small.vcap', options());
    try {
      assert.equal(source.size(), 1000);
      assert.deepEqual(source.read(0, 1000), first.subarray(0, 1000));
      assert.deepEqual(source.stats, { requests: 1, bytes: 1000 });
    } finally {
      source.close();
    }
  });

  test('openSync costs the one request of open, and reads the same bytes', async () => {
    const source = S3ByteSource.openSync('s3://sync/a.vdb', options());
    try {
      assert.equal(source.size(), first.length);
      assert.deepEqual(source.stats, { requests: 1, bytes: 64 * 1024 });
      assert.deepEqual(source.read(first.length - 10, 10), first.subarray(first.length - 10));
      assert.equal(source.stats.requests, 1, 'the tail is held');
      assert.deepEqual(source.read(100, 1000), first.subarray(100, 1100));
      assert.equal(source.stats.requests, 2);
    } finally {
      source.close();
    }
  });

  test('a missing object is NOT_FOUND naming it', () => {
    assert.throws(
      () => S3ByteSource.openSync('s3://sync/none.vdb', options()),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND' && /none\.vdb/.test(e.message),
    );
  });

  test('localCopySync writes the object into the cache once, reuses it, and keeps the cache in its bound', () => {
    const source = S3ByteSource.openSync('s3://sync/a.vdb', options());
    const path = source.localCopySync('.vdb');
    assert.deepEqual(new Uint8Array(readFileSync(path)), first);
    const requests = source.stats.requests;
    assert.equal(source.localCopySync('.vdb'), path);
    assert.equal(source.stats.requests, requests, 'the copy is reused: no request');
    source.close();
    // A bound smaller than two copies: the older one goes when the next is made.
    const bounded = S3ByteSource.openSync('s3://sync/b.vdb', { ...options(), maxCacheBytes: 1024 * 1024 });
    const other = bounded.localCopySync('.vdb');
    bounded.close();
    assert.deepEqual(new Uint8Array(readFileSync(other)), second);
    assert.deepEqual(readdirSync(join(dir, 'cache')), [other.slice(other.lastIndexOf('/') + 1)]);
  });

  test('a closed source refuses to read', () => {
    const source = S3ByteSource.openSync('s3://sync/a.vdb', options());
    source.close();
    assert.throws(
      () => source.read(0, 10),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
  });
});
