import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { s3TestServer } from '@vlink/fixtures/s3';
import { S3Client } from '@vlink/bag-s3';
import { CLI, cliArgs, cliEnv, runCli, SLOW, tempDir, writeBag } from './testing/harness.js';

/** The reading verbs, the writing verbs and `serve` on s3:// urls (moto on loopback), against the local results. */
const { server, skip, options: s3Options } = await s3TestServer();
const tmp = tempDir();
after(() => {
  tmp.cleanup();
});

const env = () => ({
  ...server!.env(),
  VLINK_S3_CACHE_DIR: tmp.path('s3-cache'),
  VLINK_S3_STAGING_DIR: tmp.path('s3-staging'),
});

/** `vlink-bag …args`, asserting exit 0; its stdout. */
async function ok(args: string[]): Promise<string> {
  const r = await runCli(args, { env: env() });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const ODD_KEYS = ['odd/./dot.vcap', 'odd//double.vcap', 'odd/back\\slash.vcap'];

describe('vlink-bag verbs on s3://', { skip }, () => {
  const vcap = tmp.path('drive.vcap');
  const vdb = tmp.path('drive.vdb');
  before(async () => {
    await writeBag(vcap);
    await writeBag(vdb, { startMs: 1_773_712_900_000 });
    // A split recording to upload: cloned locally with segments of 1 s.
    mkdirSync(tmp.path('split'));
    await ok(['clone', vcap, tmp.path('split/drive.vcapx'), '--split-by-time', '1', '-q']);
    const client = new S3Client(s3Options());
    await client.createBucket('bags');
    await client.put({ bucket: 'bags', key: 'car-1/drive.vcap' }, readFileSync(vcap));
    await client.put({ bucket: 'bags', key: 'car-1/drive.vdb' }, readFileSync(vdb));
    // Keys that are names, not paths: listed and read by index, cat and serve alike.
    for (const key of ODD_KEYS) await client.put({ bucket: 'bags', key: `car-1/${key}` }, readFileSync(vcap));
    for (const name of readdirSync(tmp.path('split')))
      await client.put({ bucket: 'bags', key: `car-1/split/${name}` }, readFileSync(tmp.path(`split/${name}`)));
  });

  const pairs = () => [
    ['s3://bags/car-1/drive.vcap', vcap],
    ['s3://bags/car-1/drive.vdb', vdb],
    ['s3://bags/car-1/split/drive.vcapx', tmp.path('split/drive.vcapx')],
  ];

  test('check, info and cat of a .vcapx on S3 equal the local output', SLOW, async () => {
    for (const verb of [['check'], ['info', '--json'], ['cat', '--meta']]) {
      const [url, local] = pairs()[2]!;
      const [remote, expected] = await Promise.all([ok([...verb, url]), ok([...verb, local])]);
      assert.ok(expected.length > 20, `${verb.join(' ')} printed something`);
      assert.equal(remote.replaceAll(url, local), expected, verb.join(' '));
    }
  });

  test('check of every format on S3 passes as the local check does', SLOW, async () => {
    for (const [url, local] of pairs()) {
      const [remote, expected] = await Promise.all([ok(['check', url]), ok(['check', local])]);
      assert.equal(remote.replaceAll(url, local), expected);
    }
  });

  test('clone and merge read s3:// inputs: the same frames as from the local files', SLOW, async () => {
    for (const [url, local] of pairs()) {
      const name = url.slice(url.lastIndexOf('/') + 1).replace('.', '-');
      await ok(['clone', url, tmp.path(`from-s3-${name}.vdb`), '-q']);
      await ok(['clone', local, tmp.path(`from-local-${name}.vdb`), '-q']);
      const [a, b] = await Promise.all([
        ok(['cat', '--format', 'ndjson', tmp.path(`from-s3-${name}.vdb`)]),
        ok(['cat', '--format', 'ndjson', tmp.path(`from-local-${name}.vdb`)]),
      ]);
      assert.ok(b.length > 1000);
      assert.equal(a, b, url);
    }
    await ok([
      'merge',
      's3://bags/car-1/drive.vcap',
      's3://bags/car-1/drive.vdb',
      '-o',
      tmp.path('merged-s3.vcap'),
      '-q',
    ]);
    await ok(['merge', vcap, vdb, '-o', tmp.path('merged-local.vcap'), '-q']);
    const [a, b] = await Promise.all([
      ok(['cat', '--format', 'ndjson', tmp.path('merged-s3.vcap')]),
      ok(['cat', '--format', 'ndjson', tmp.path('merged-local.vcap')]),
    ]);
    assert.equal(a, b);
  });

  test(
    'clone to s3:// uploads a bag (and a split one segment by segment) that reads back as the local clone',
    SLOW,
    async () => {
      for (const [target, local, extra] of [
        ['s3://bags/out/copy.vdb', tmp.path('copy.vdb'), []],
        ['s3://bags/out/copy.vcapx', tmp.path('copy.vcapx'), ['--split-by-time', '1']],
      ] as const) {
        await ok(['clone', vcap, target, '-q', ...extra]);
        await ok(['clone', vcap, local, '-q', ...extra]);
        const [a, b] = await Promise.all([
          ok(['cat', '--format', 'ndjson', target]),
          ok(['cat', '--format', 'ndjson', local]),
        ]);
        assert.ok(b.length > 1000);
        assert.equal(a, b, target);
      }
      assert.deepEqual(readdirSync(tmp.path('s3-staging')), [], 'nothing left staged');
    },
  );

  test('cat s3://… | record --stdin s3://… round-trips byte for byte through S3', SLOW, async () => {
    const original = await ok(['cat', '--format', 'ndjson', 's3://bags/car-1/drive.vcap']);
    const rec = await runCli(['record', '--stdin', 's3://bags/out/piped.vdbx', '--split-by-time', '1', '-q'], {
      input: original,
      env: env(),
    });
    assert.equal(rec.code, 0, rec.stderr);
    assert.equal(await ok(['cat', '--format', 'ndjson', 's3://bags/out/piped.vdbx']), original);
    assert.equal(await ok(['cat', '--format', 'ndjson', vcap]), original);
  });

  test('a verb that rewrites a bag in place refuses an s3:// url with one error line', SLOW, async () => {
    const r = await runCli(['reindex', 's3://bags/car-1/drive.vcap'], { env: env() });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /read-only/);
  });

  test(
    'serve s3://bucket/prefix lists the bags under it and serves their info; a missing one is a 404',
    SLOW,
    async () => {
      const child = spawn(CLI[0], cliArgs(['serve', 's3://bags/car-1', '--port', '0', '--json']), {
        env: cliEnv(env()),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        let stderr = '';
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const base = await new Promise<string>((resolve, reject) => {
          let out = '';
          child.stdout!.on('data', (chunk: Buffer) => {
            out += chunk.toString();
            const line = out.split('\n')[0];
            if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url);
          });
          child.once('close', () => reject(new Error(`serve exited: ${stderr}`)));
        });
        const listing = (await (await fetch(`${base}/v1/bags`)).json()) as {
          bags: Array<{ id: string; messageCount: number }>;
        };
        assert.deepEqual(
          listing.bags.map((b) => b.id).sort(),
          ['drive.vcap', 'drive.vdb', ...ODD_KEYS, 'split/drive.vcapx'].sort(),
        );
        for (const [url, local] of [...pairs(), ...ODD_KEYS.map((key) => [`s3://bags/car-1/${key}`, vcap] as const)]) {
          const id = url.slice('s3://bags/car-1/'.length);
          const answer = await fetch(`${base}/v1/bags/${encodeURIComponent(id)}/info`);
          const served = (await answer.json()) as Record<string, unknown>;
          assert.equal(answer.status, 200, JSON.stringify(served));
          const expected = JSON.parse(await ok(['info', '--json', local])) as Record<string, unknown>;
          assert.equal(served['messageCount'], expected['messageCount'], id);
          assert.deepEqual(served['urls'], expected['urls'], id);
          assert.equal(listing.bags.find((b) => b.id === id)?.messageCount, expected['messageCount']);
        }
        const missing = await fetch(`${base}/v1/bags/none.vcap/info`);
        assert.equal(missing.status, 404);
        assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
        const after = await fetch(`${base}/v1/health`);
        assert.equal(after.status, 200, 'the server is still up after an S3 error');
      } finally {
        child.kill('SIGTERM');
      }
    },
  );
});
