import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { s3TestServer } from '@vlink/fixtures/s3';
import { ActionType, BagWriter, SchemaType } from '@vlink/bag';
import { S3Client } from '@vlink/bag-s3';
import { runCli, SLOW, START_MS, tempDir } from './testing/harness.js';

/**
 * `info` and a time-bounded `cat` of split recordings on S3 (moto on loopback) print what they print for the local
 * recording, and a `.vdbx` proves which segments were read: its segments go through the local cache, which `info`
 * leaves empty and a window of one second fills with the two segments it overlaps.
 */
const { server, skip, options: s3Options } = await s3TestServer();
const tmp = tempDir();
after(() => {
  tmp.cleanup();
});

/** Six one-second segments of 600 frames on two urls. */
async function record(path: string): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: START_MS, splitByTime: 1000 });
  for (let i = 0; i < 600; i++) {
    writer.push({
      timestamp: 1000 + i * 10_000,
      url: i % 2 === 0 ? '/pose' : '/scan',
      data: Uint8Array.from({ length: 32 + (i % 7) }, (_, j) => (i + j) & 0xff),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
}

for (const ext of ['.vdbx', '.vcapx']) {
  describe(`info and a time window of a ${ext} on s3://`, { skip }, () => {
    const folder = tmp.path(ext.slice(1));
    const local = join(folder, `drive${ext}`);
    const url = `s3://bags/split-${ext.slice(1)}/drive${ext}`;
    /** Each run with a cache of its own, to see which segments it copied. */
    const cacheOf = (args: string[]) => tmp.path(`cache-${ext.slice(1)}-${args.join('')}`);
    const cached = (args: string[]) =>
      existsSync(cacheOf(args)) ? readdirSync(cacheOf(args)).filter((n) => n.endsWith('.vdb')) : [];
    const remoteRun = (args: string[]) =>
      runCli([...args, url], { env: { ...server!.env(), VLINK_S3_CACHE_DIR: cacheOf(args) } });

    before(async () => {
      mkdirSync(folder, { recursive: true });
      await record(local);
      const client = new S3Client(s3Options());
      await client.createBucket('bags').catch(() => undefined);
      const names = readdirSync(folder);
      const segments = names.filter((n) => n.endsWith(ext.slice(0, -1)));
      assert.equal(segments.length, 6, `six segments: ${names.join(', ')}`);
      for (const name of names)
        await client.put({ bucket: 'bags', key: `split-${ext.slice(1)}/${name}` }, readFileSync(join(folder, name)));
    });

    // `info --json` is the summary document, which reads every frame (per-stream timing): its segments are read.
    for (const args of [['info'], ['info', '--json']]) {
      test(
        `${args.join(' ')} equals the local output${args.length === 1 ? ' and reads no segment' : ''}`,
        SLOW,
        async () => {
          const [remote, expected] = await Promise.all([remoteRun(args), runCli([...args, local])]);
          assert.equal(remote.code, 0, remote.stderr);
          assert.equal(expected.code, 0, expected.stderr);
          assert.match(expected.stdout, /600/);
          assert.equal(remote.stdout.replaceAll(url, local), expected.stdout);
          if (args.length === 1) assert.deepEqual(cached(args), []);
        },
      );
    }

    test(
      'cat of a one-second window equals the local output; a .vdbx copies the two segments it overlaps',
      SLOW,
      async () => {
        const args = ['cat', '--begin', '2.5', '--end', '3.5', '--format', 'text'];
        const [remote, expected] = await Promise.all([remoteRun(args), runCli([...args, local])]);
        assert.equal(remote.code, 0, remote.stderr);
        assert.equal(expected.stdout.trim().split('\n').length, 100);
        assert.equal(remote.stdout.replaceAll(url, local), expected.stdout);
        assert.equal(cached(args).length, ext === '.vdbx' ? 2 : 0);
      },
    );
  });
}
