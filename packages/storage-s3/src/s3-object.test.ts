import assert from 'node:assert/strict';
import { before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { S3Client } from './s3-client.js';
import { listObjects } from './s3-list.js';
import { parseS3Url } from './s3-location.js';
import { S3Object } from './s3-object.js';
import { resolveS3Options } from './s3-options.js';
import { s3TestServer } from '@vlink/fixtures/s3';

/** Range reads against a real S3-compatible server (moto) on loopback: the bytes equal the uploaded ones. */
const { skip, options: s3Options } = await s3TestServer();

/** 3 MiB + 123 bytes of a pattern that differs at every offset within the object (no two 4-byte words repeat). */
const object = Uint8Array.from({ length: 3 * 1024 * 1024 + 123 }, (_, i) => (i * 2_654_435_761) >>> 24);

describe('S3Object over a real S3 server', { skip }, () => {
  let client: S3Client;
  before(async () => {
    client = new S3Client(s3Options());
    await client.createBucket('bags');
    await client.put(parseS3Url('s3://bags/fleet/car 1/drive.vcap'), object);
  });

  test('open costs one request (size and tail); tail reads are free; other ranges one GET each, byte for byte', async () => {
    const reader = new S3Client(s3Options());
    const s3 = await S3Object.open('s3://bags/fleet/car 1/drive.vcap', { client: reader, tailBytes: 64 * 1024 });
    assert.equal(s3.size, object.length);
    assert.deepEqual(reader.stats, { requests: 1, bytes: 64 * 1024 });
    assert.deepEqual(await s3.read(object.length - 100, 100), object.subarray(object.length - 100));
    assert.deepEqual(
      await s3.read(object.length - 64 * 1024, 10),
      object.subarray(object.length - 64 * 1024, object.length - 64 * 1024 + 10),
    );
    assert.equal(reader.stats.requests, 1, 'reads inside the tail are answered from memory');
    assert.deepEqual(await s3.read(0, 8), object.subarray(0, 8));
    assert.deepEqual(await s3.read(1_000_000, 300_000), object.subarray(1_000_000, 1_300_000));
    assert.deepEqual(reader.stats, { requests: 3, bytes: 64 * 1024 + 8 + 300_000 });
    await assert.rejects(
      s3.read(object.length - 5, 6),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE',
    );
  });

  test('a whole object smaller than the tail is read in the one request', async () => {
    const small = object.subarray(0, 1000);
    await client.put(parseS3Url('s3://bags/small.bin'), small);
    const reader = new S3Client(s3Options());
    const s3 = await S3Object.open('s3://bags/small.bin', { client: reader });
    assert.equal(s3.size, 1000);
    assert.deepEqual(await s3.read(0, 1000), small);
    assert.equal(reader.stats.requests, 1);
  });

  test('getRangeInto: the bytes of getRange, read into shared memory; a server ignoring the range too', async () => {
    // A server that ignores ranges answers 200 with the whole object (the range header is not sent to it here).
    const noRanges: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      const headers = new Headers(request.headers);
      headers.delete('range');
      return fetch(new Request(request, { headers }));
    };
    const location = parseS3Url('s3://bags/fleet/car 1/drive.vcap');
    for (const reader of [new S3Client(s3Options()), new S3Client(s3Options({ fetch: noRanges }))]) {
      const into = new Uint8Array(new SharedArrayBuffer(2_500_000));
      for (const [offset, length] of [
        [1_000_001, 2_500_000],
        [-70_000, 70_000],
        [object.length - 10, 2_500_000],
      ] as const) {
        const got = await reader.getRangeInto(location, offset, length, into);
        const expected = offset < 0 ? object.subarray(offset) : object.subarray(offset, offset + length);
        assert.equal(got.length, expected.length, `${offset}`);
        assert.equal(got.objectSize, object.length);
        assert.deepEqual(into.slice(0, got.length), expected.slice(), `${offset}`);
      }
    }
  });

  test('keys with `.`, `..` and empty segments or a backslash are written, listed and read exactly', async () => {
    const keys = [
      'p/./dot.vcap',
      'p/../up.vcap',
      './lead.vcap',
      'p/..',
      'p//double.vcap',
      'p/back\\slash.vcap',
      'p/.x/..y',
    ];
    await client.createBucket('odd');
    for (const [i, key] of keys.entries()) await client.put({ bucket: 'odd', key }, object.subarray(i, i + 100));
    // url normalisation would have stored `p/./dot.vcap` as `p/dot.vcap` and `p/../up.vcap` as `up.vcap`
    assert.deepEqual((await listObjects(client, 'odd', '')).map((o) => o.key).sort(), [...keys].sort());
    const reader = new S3Client(s3Options());
    for (const [i, key] of keys.entries()) {
      const s3 = await S3Object.open(`s3://odd/${key}`, { client: reader });
      assert.deepEqual(await s3.read(0, 100), object.subarray(i, i + 100), key);
    }
  });

  test('a missing key is NOT_FOUND, a missing bucket too', async () => {
    for (const url of ['s3://bags/nothing.vcap', 's3://no-such-bucket/x.vcap']) {
      await assert.rejects(
        S3Object.open(url, s3Options()),
        (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND' && e.message.includes('404'),
        url,
      );
    }
  });
});

describe('S3 options and urls', () => {
  test('s3:// urls split into bucket and key; anything else is INVALID_ARGUMENT', () => {
    assert.deepEqual(parseS3Url('s3://b/a/b c.vcap'), { bucket: 'b', key: 'a/b c.vcap' });
    for (const bad of ['s3://bucket', 's3://bucket/', 'http://b/k', '/tmp/x.vcap'])
      assert.throws(() => parseS3Url(bad), { code: 'INVALID_ARGUMENT' }, bad);
  });

  test('options win over AWS_* variables; an endpoint means path-style; credentials are required', () => {
    const env = {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
    };
    const fromEnv = resolveS3Options({}, env);
    assert.deepEqual(
      [fromEnv.endpoint.href, fromEnv.region, fromEnv.accessKeyId, fromEnv.sessionToken, fromEnv.pathStyle],
      ['http://127.0.0.1:9000/', 'eu-west-1', 'id', 'token', true],
    );
    const s3Specific = resolveS3Options({ region: 'ap-south-1' }, { ...env, AWS_ENDPOINT_URL_S3: 'http://s3.local:1' });
    assert.deepEqual([s3Specific.endpoint.host, s3Specific.region], ['s3.local:1', 'ap-south-1']);
    const aws = resolveS3Options({}, { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' });
    assert.deepEqual(
      [aws.endpoint.href, aws.region, aws.pathStyle],
      ['https://s3.us-east-1.amazonaws.com/', 'us-east-1', false],
    );
    const client = new S3Client({
      accessKeyId: 'a',
      secretAccessKey: 'b',
      region: 'us-east-1',
      fetch: globalThis.fetch,
    });
    assert.equal(
      client.objectUrl({ bucket: 'bk', key: 'a b/c.vcap' }),
      'https://bk.s3.us-east-1.amazonaws.com/a%20b/c.vcap',
    );
    // a dot segment is joined to its neighbours with %2F: `new URL` and fetch would drop it (`%2E` too)
    for (const [key, path] of [
      ['p/./x.vcap', 'p%2F.%2Fx.vcap'],
      ['a/b/../c', 'a/b%2F..%2Fc'],
      ['./x', '.%2Fx'],
      ['x/..', 'x%2F..'],
      ['a//b/.hidden', 'a//b/.hidden'],
    ]) {
      const url = client.objectUrl({ bucket: 'bk', key });
      assert.equal(url, `https://bk.s3.us-east-1.amazonaws.com/${path}`);
      assert.equal(new URL(url).href, url, 'a url fetch leaves as it is');
    }
    for (const key of ['.', '..']) {
      assert.throws(() => client.objectUrl({ bucket: 'bk', key }), {
        code: 'INVALID_ARGUMENT',
        message: `the S3 key "${key}" cannot be named in a request url (file s3://bk/${key})`,
      });
    }
    assert.throws(() => resolveS3Options({}, { AWS_ACCESS_KEY_ID: 'only-id' }), {
      code: 'INVALID_ARGUMENT',
      message: /AWS_SECRET_ACCESS_KEY/,
    });
  });
});
