import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader, BagWriter, registerByteSourceScheme, SchemaType } from '@vlink/bag';
import { S3ByteSource } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { readBag, recordedFrames } from './testing/recorded-frames.js';
import { parseS3Url } from './s3-location.js';
import { s3TestServer } from '@vlink/fixtures/s3';

/** `BagReader.create('s3://…')` against a real S3 server (moto): the same info, schemas and frames as the local file. */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-s3-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const opened: S3ByteSource[] = [];

describe('BagReader over S3 (.vcap)', { skip }, () => {
  const local = join(dir, 'drive.vcap');
  before(async () => {
    const writer = await BagWriter.create(local, { syncMode: true, startTimestamp: 1_700_000_000_000, tagName: 's3' });
    writer.pushSchema({
      name: 'pb.Pose',
      encoding: 'protobuf',
      schemaType: SchemaType.Protobuf,
      data: new Uint8Array([10, 3, 1, 2, 3]),
    });
    for (const f of recordedFrames()) writer.push(f);
    await writer.close();
    const client = new S3Client(s3Options());
    await client.createBucket('fleet');
    await client.put(parseS3Url('s3://fleet/car-1/drive.vcap'), readFileSync(local));
    registerByteSourceScheme('s3', async (url) => {
      const source = await S3ByteSource.open(url, s3Options());
      opened.push(source);
      return source;
    });
  });

  test('info in at most 3 range requests and 1 MiB; equal to the local info', async () => {
    const reader = await BagReader.create('s3://fleet/car-1/drive.vcap');
    const info = reader.getInfo();
    const schemas = reader.getSchemas();
    reader.close();
    const source = opened.at(-1)!;
    assert.ok(source.stats.requests <= 3, `${source.stats.requests} requests`);
    assert.ok(source.stats.bytes <= 1024 * 1024, `${source.stats.bytes} bytes`);
    const expected = await readBag(local);
    assert.deepEqual({ ...info, path: '' }, { ...expected.info, path: '' });
    assert.deepEqual(schemas, expected.schemas);
  });

  test('every frame read over S3 equals the local one, byte for byte', async () => {
    const [remote, expected] = [await readBag('s3://fleet/car-1/drive.vcap'), await readBag(local)];
    assert.equal(remote.frames.length, 6000);
    assert.deepEqual(remote.frames, expected.frames);
    const source = opened.at(-1)!;
    assert.ok(source.stats.bytes >= readFileSync(local).length * 0.9, 'the data section was read');
  });

  test('a missing object is NOT_FOUND; a read-write open is refused', async () => {
    await assert.rejects(
      BagReader.create('s3://fleet/none.vcap'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
    );
    await assert.rejects(
      BagReader.create('s3://fleet/car-1/drive.vcap', { readOnly: false }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED',
    );
  });
});

describe('BagReader over S3 (.vdb through the bounded local cache)', { skip }, () => {
  const cacheDir = join(dir, 'cache');
  const options = () => s3Options({ cacheDir, maxCacheBytes: 0 });
  const sources: S3ByteSource[] = [];
  const locals = [join(dir, 'a.vdb'), join(dir, 'b.vdb')];
  before(async () => {
    const client = new S3Client(s3Options());
    await client.createBucket('vdbs');
    for (const [n, local] of locals.entries()) {
      const writer = await BagWriter.create(local, { syncMode: true, startTimestamp: 1_700_000_000_000 + n });
      writer.pushSchema({
        name: 'pb.Pose',
        encoding: 'protobuf',
        schemaType: SchemaType.Protobuf,
        data: new Uint8Array([n, 1]),
      });
      for (const f of recordedFrames().slice(0, 2000 + n)) writer.push(f);
      await writer.close();
      await client.put(parseS3Url(`s3://vdbs/${n}.vdb`), readFileSync(local));
    }
    registerByteSourceScheme('s3', async (url) => {
      const source = await S3ByteSource.open(url, options());
      sources.push(source);
      return source;
    });
  });

  test('info, schemas and every frame equal the local file; the url stays the path; a second open reuses the copy', async () => {
    const [remote, expected] = [await readBag('s3://vdbs/0.vdb'), await readBag(locals[0]!)];
    assert.equal(remote.info.path, 's3://vdbs/0.vdb');
    assert.deepEqual({ ...remote.info, path: '' }, { ...expected.info, path: '' });
    assert.deepEqual(remote.schemas, expected.schemas);
    assert.equal(remote.frames.length, 2000);
    assert.deepEqual(remote.frames, expected.frames);
    const size = readFileSync(locals[0]!).length;
    assert.ok(sources.at(-1)!.stats.bytes <= size, 'the open fetched at most the object');
    const again = await BagReader.create('s3://vdbs/0.vdb');
    assert.equal(again.getInfo().messageCount, 2000);
    again.close();
    assert.deepEqual(sources.at(-1)!.object.client.stats.requests, 1, 'only the open: the copy was reused');
    const cached = readdirSync(cacheDir);
    assert.equal(cached.length, 1);
    assert.deepEqual(readFileSync(join(cacheDir, cached[0]!)), readFileSync(locals[0]!), 'the copy is byte for byte');
  });

  test('the cache keeps within its bound: the least recently used copy goes', async () => {
    const reader = await BagReader.create('s3://vdbs/1.vdb');
    assert.equal(reader.getInfo().messageCount, 2001);
    reader.close();
    const cached = readdirSync(cacheDir).filter((name) => name.endsWith('.vdb'));
    assert.equal(cached.length, 1, 'a bound of 0 keeps only the copy just made');
    assert.deepEqual(readFileSync(join(cacheDir, cached[0]!)), readFileSync(locals[1]!));
  });
});

describe('urls without a registered reader', () => {
  test('an unregistered scheme is NOT_SUPPORTED, naming it; a .vdb behind a url is refused by its backend', async () => {
    await assert.rejects(
      BagReader.create('gs://bucket/drive.vcap'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED' && e.message.includes('gs://'),
    );
    registerByteSourceScheme('mem', async (url) => ({
      name: url,
      size: () => 0,
      read: () => new Uint8Array(0),
      close: () => {},
    }));
    await assert.rejects(
      BagReader.create('mem://x/drive.vdb'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED' && /local files/.test(e.message),
    );
  });
});
