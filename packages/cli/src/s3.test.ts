import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { fixturePath } from '@vlink/fixtures';
import { s3TestServer } from '@vlink/fixtures/s3';
import { parseS3Url, S3Client } from '@vlink/bag-s3';
import { runCli, SLOW, tempDir, writeBag } from './testing/harness.js';

/** `vlink-bag info` and `cat` on an s3:// url print what they print for the local file (moto on loopback). */
const { server, skip, options: s3Options } = await s3TestServer();
const tmp = tempDir();
after(() => {
  tmp.cleanup();
});

describe('info and cat on s3://', { skip }, () => {
  const vcap = tmp.path('drive.vcap');
  const vdb = tmp.path('drive.vdb');
  // Ours (a .vdb through the local cache), and a foreign MCAP file (Foxglove's protobuf example) read by @vlink/bag-interop.
  const bags: Array<[string, string]> = [
    [vcap, 's3://bags/car-1/drive.vcap'],
    [vdb, 's3://bags/car-1/drive.vdb'],
    [fixturePath('foreign', 'mcap', 'protobuf.mcap'), 's3://bags/foreign/protobuf.mcap'],
  ];
  before(async () => {
    await writeBag(vcap);
    await writeBag(vdb);
    const client = new S3Client(s3Options());
    await client.createBucket('bags');
    for (const [local, url] of bags) await client.put(parseS3Url(url), readFileSync(local));
  });

  const verbs = [['info'], ['info', '--json'], ['cat'], ['cat', '--format', 'text'], ['cat', '--meta']];
  for (const [args, [local, url]] of verbs.flatMap((v) => bags.map((b) => [v, b] as const))) {
    test(`${args.join(' ')} ${url} equals the local output`, SLOW, async () => {
      const [remote, expected] = await Promise.all([
        runCli([...args, url], { env: { ...server!.env(), VLINK_S3_CACHE_DIR: tmp.path('s3-cache') } }),
        runCli([...args, local]),
      ]);
      assert.equal(remote.code, 0, remote.stderr);
      assert.equal(expected.code, 0, expected.stderr);
      assert.ok(expected.stdout.length > 100, 'the local output is not empty');
      // The only difference allowed is the name of the file.
      assert.equal(remote.stdout.replaceAll(url, local), expected.stdout);
    });
  }

  test('a missing object is one error line, exit 1', SLOW, async () => {
    const r = await runCli(['info', 's3://bags/none.vcap'], { env: server!.env() });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /none\.vcap.*not found on S3 \(404/);
  });
});
