import assert from 'node:assert/strict';
import { before, describe, test } from '@vlink/fixtures/test';
import { s3TestServer } from '@vlink/fixtures/s3';
import { helperThreads } from './range-helper.js';
import { READ_AHEAD_BYTES, S3ByteSource } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { parseS3Url } from './s3-location.js';

/**
 * The read-ahead of `S3ByteSource` against a real S3 server (moto): a forward read (chunk after chunk, with gaps as
 * MCAP's message indexes leave between chunks) fetches no byte twice and few requests, the next block being
 * prefetched while the caller works; a read that leaves the forward path still gets the right bytes.
 */
const { skip, options: s3Options } = await s3TestServer();

const TAIL = 64 * 1024;
const SIZE = 9 * 1024 * 1024 + 123;
const object = Uint8Array.from({ length: SIZE }, (_, i) => (i * 2_654_435_761) >>> 24);
const options = () => s3Options({ tailBytes: TAIL });

/** Reads `chunk`-byte pieces with `gap` bytes skipped between them from the start to the tail; checks each. */
function readForward(source: S3ByteSource, chunk: number, gap: number): number {
  let reads = 0;
  for (let offset = 0; offset + chunk <= SIZE - TAIL; offset += chunk + gap) {
    assert.deepEqual(source.read(offset, chunk), object.subarray(offset, offset + chunk), `read at ${offset}`);
    reads++;
  }
  return reads;
}

describe('S3ByteSource read-ahead', { skip }, () => {
  before(async () => {
    const client = new S3Client(s3Options());
    await client.createBucket('ahead');
    await client.put(parseS3Url('s3://ahead/object.bin'), object);
  });

  test('a forward read of chunks larger than the read-ahead fetches no byte twice, in a few requests', async () => {
    const source = await S3ByteSource.open('s3://ahead/object.bin', options());
    try {
      const chunk = 3 * READ_AHEAD_BYTES + 17;
      const reads = readForward(source, chunk, 18_000);
      assert.ok(reads > 10);
      // The tail of the open, then every byte at most once (the gaps included: they sit inside the blocks fetched).
      assert.ok(source.stats.bytes <= SIZE + TAIL, `${source.stats.bytes} bytes fetched for a ${SIZE}-byte object`);
      assert.ok(source.stats.requests <= 8, `${source.stats.requests} requests for ${reads} reads`);
    } finally {
      source.close();
    }
  });

  test('going forward, the next block is asked for at once and the read that reaches it costs no request', async () => {
    const source = await S3ByteSource.open('s3://ahead/object.bin', options());
    try {
      const opened = source.stats.requests;
      const at = (offset: number) =>
        assert.deepEqual(source.read(offset, 1000), object.subarray(offset, offset + 1000));
      at(0);
      assert.equal(source.stats.requests, opened + 1, 'a miss: one block');
      at(READ_AHEAD_BYTES + 50_000);
      assert.equal(source.stats.requests, opened + 3, 'a forward miss: its block, and the next one prefetched');
      at(3 * READ_AHEAD_BYTES + 100_000);
      assert.equal(source.stats.requests, opened + 4, 'inside the prefetched block: no new miss, one more prefetch');
    } finally {
      source.close();
    }
  });

  test('small forward reads grow the blocks up to the bound', async () => {
    const source = await S3ByteSource.open('s3://ahead/object.bin', options());
    try {
      const reads = readForward(source, 4096, 100);
      assert.ok(reads > 2000);
      assert.ok(source.stats.bytes <= SIZE + TAIL);
      assert.ok(source.stats.requests <= 10, `${source.stats.requests} requests for ${reads} reads`);
    } finally {
      source.close();
    }
  });

  test('a jump back or far ahead drops the prefetch and reads the right bytes', async () => {
    const source = await S3ByteSource.open('s3://ahead/object.bin', options());
    try {
      readForward(source, READ_AHEAD_BYTES, 0);
      for (const offset of [0, 5 * 1024 * 1024, 1234, SIZE - TAIL - 70_000, 2 * 1024 * 1024 + 1]) {
        assert.deepEqual(source.read(offset, 70_000), object.subarray(offset, offset + 70_000), `read at ${offset}`);
      }
      // A read straddling the end of the block held: the part held is kept, the rest fetched.
      const first = source.read(3 * 1024 * 1024, 1000);
      assert.deepEqual(first, object.subarray(3 * 1024 * 1024, 3 * 1024 * 1024 + 1000));
      const straddling = 3 * 1024 * 1024 + READ_AHEAD_BYTES - 500;
      assert.deepEqual(source.read(straddling, 300_000), object.subarray(straddling, straddling + 300_000));
    } finally {
      source.close();
    }
  });

  test('sources opened one after another read through the same helper thread', async () => {
    const startedBefore = helperThreads.started;
    for (let i = 0; i < 3; i++) {
      const source = S3ByteSource.openSync('s3://ahead/object.bin', options());
      try {
        assert.deepEqual(source.read(777, 5000), object.subarray(777, 5777));
      } finally {
        source.close();
      }
    }
    assert.ok(helperThreads.started - startedBefore <= 1, 'the idle helper thread was reused');
  });
});
