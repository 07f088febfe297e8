import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagReader, BagWriter, type ByteSource, type Frame, registerUrlScheme, SchemaType } from '@vlink/bag';
import { s3TestServer } from '@vlink/fixtures/s3';
import { S3ByteSource } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { listObjects } from './s3-list.js';
import { parseS3Prefix } from './s3-location.js';
import { recordedFrames } from './testing/recorded-frames.js';

/**
 * Split recordings on a real S3 server (moto) whose manifest says what each segment holds: `info` opens no segment,
 * a time window opens only the segments it overlaps, and what is read equals the local recording byte for byte.
 * Manifests without the facts (older writers, VLink) still read; facts that lie are caught.
 */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-s3-lazy-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every byte source opened (asynchronously or at once), in order: what a read fetched, object by object. */
const opened: S3ByteSource[] = [];

function register(): void {
  const options = s3Options({ cacheDir: join(dir, 'cache') });
  const client = new S3Client(options);
  const count = (source: S3ByteSource): ByteSource => {
    opened.push(source);
    return source;
  };
  registerUrlScheme('s3', {
    open: async (url) => count(await S3ByteSource.open(url, options)),
    openSync: (url) => count(S3ByteSource.openSync(url, options)),
    async list(prefix) {
      const { bucket, key } = parseS3Prefix(prefix);
      return (await listObjects(client, bucket, key)).map((o) => ({
        url: `s3://${bucket}/${o.key}`,
        size: o.size,
        mtimeMs: o.mtimeMs,
      }));
    },
  });
}

async function readFrames(path: string, window: { beginTime?: number; endTime?: number } = {}) {
  const reader = await BagReader.create(path);
  try {
    const frames: Frame[] = [];
    for await (const f of reader.frames(window)) frames.push({ ...f, data: f.data.slice() });
    return { info: reader.getInfo(), frames };
  } finally {
    reader.close();
  }
}

const segmentName = (source: S3ByteSource) => source.name.slice(source.name.lastIndexOf('/') + 1);

for (const ext of ['.vcapx', '.vdbx']) {
  describe(`split recording read lazily over S3 (${ext})`, { skip }, () => {
    const folder = mkdtempSync(join(dir, 'rec-'));
    const local = join(folder, `drive${ext}`);
    const prefix = `s3://fleet/lazy/${ext.slice(1)}/`;
    const url = `${prefix}drive${ext}`;
    const client = () => new S3Client(s3Options());
    const put = (name: string, bytes: Uint8Array) =>
      client().put({ bucket: 'fleet', key: `lazy/${ext.slice(1)}/${name}` }, bytes);
    let manifest: { VLinkFiles: string[]; VLinkBagSegments: { file: string; begin: number; end: number }[] };
    let segmentBytes = 0;

    before(async () => {
      const writer = await BagWriter.create(local, {
        syncMode: true,
        startTimestamp: 1_700_000_000_000,
        splitByTime: 1000,
        summary: false,
      });
      writer.pushSchema({
        name: 'pb.Pose',
        encoding: 'protobuf',
        schemaType: SchemaType.Protobuf,
        data: new Uint8Array([10, 3]),
      });
      for (const f of recordedFrames()) writer.push(f);
      await writer.close();
      await client()
        .createBucket('fleet')
        .catch(() => undefined);
      for (const name of readdirSync(folder)) {
        const bytes = readFileSync(join(folder, name));
        if (name !== `drive${ext}`) segmentBytes += bytes.length;
        await put(name, bytes);
      }
      manifest = JSON.parse(readFileSync(local, 'utf8'));
      register();
    });

    test('the manifest says what each of its six segments holds', () => {
      assert.equal(manifest.VLinkFiles.length, 6);
      assert.deepEqual(
        manifest.VLinkBagSegments.map((s) => s.file),
        manifest.VLinkFiles,
      );
      // 6000 frames, one a ms from 1 ms: segment k holds [k s, (k + 1) s) but the first, from 1 ms.
      assert.deepEqual(
        manifest.VLinkBagSegments.map((s) => [s.begin, s.end]),
        [
          [1000, 1_000_000],
          [1_001_000, 2_000_000],
          [2_001_000, 3_000_000],
          [3_001_000, 4_000_000],
          [4_001_000, 5_000_000],
          [5_001_000, 6_000_000],
        ],
      );
    });

    test('info opens no segment: one request for the manifest, and the info equals the local one', async () => {
      opened.length = 0;
      const reader = await BagReader.create(url);
      const info = reader.getInfo();
      reader.close();
      const expected = await BagReader.create(local);
      assert.deepEqual(info, { ...expected.getInfo(), path: url });
      expected.close();
      assert.deepEqual(
        opened.map((s) => segmentName(s)),
        [`drive${ext}`],
        'only the manifest is fetched',
      );
      assert.equal(opened[0]!.stats.requests, 1);
      assert.ok(opened[0]!.stats.bytes < 8192, `${opened[0]!.stats.bytes} bytes for the manifest`);
    });

    test('a time window opens only the segments it overlaps, and reads what the local recording reads', async () => {
      opened.length = 0;
      const window = { beginTime: 2500, endTime: 3500 };
      const remote = await readFrames(url, window);
      const segments = opened.map(segmentName).filter((name) => name !== `drive${ext}`);
      assert.deepEqual(segments, [manifest.VLinkFiles[2], manifest.VLinkFiles[3]]);
      const fetched = opened.reduce((sum, s) => sum + s.stats.bytes, 0);
      assert.ok(fetched < segmentBytes / 2, `${fetched} bytes fetched of ${segmentBytes}`);
      const expected = await readFrames(local, window);
      assert.equal(expected.frames.length, 1001);
      assert.deepEqual(remote.frames, expected.frames);
      assert.deepEqual(remote.info, { ...expected.info, path: url });
    });

    test('a whole read equals the local one; each segment is opened once', async () => {
      opened.length = 0;
      const [remote, expected] = [await readFrames(url), await readFrames(local)];
      assert.equal(expected.frames.length, 6000);
      assert.deepEqual(remote.frames, expected.frames);
      const segments = opened.map(segmentName).filter((name) => name !== `drive${ext}`);
      assert.deepEqual(segments, manifest.VLinkFiles);
    });

    test('a manifest without segment facts (an older writer, VLink) still reads, opening every segment', async () => {
      const { VLinkBagSegments: _, ...old } = manifest;
      await put(`old${ext}`, new TextEncoder().encode(JSON.stringify(old, null, 4)));
      opened.length = 0;
      const remote = await readFrames(`${prefix}old${ext}`, { beginTime: 2500, endTime: 3500 });
      assert.equal(opened.length, 1 + manifest.VLinkFiles.length, 'the manifest and every segment');
      const expected = await readFrames(local, { beginTime: 2500, endTime: 3500 });
      assert.deepEqual(remote.frames, expected.frames);
      assert.deepEqual(remote.info, { ...expected.info, path: `${prefix}old${ext}` });
    });

    test('facts that lie: the read that reaches the segment is CORRUPT_FILE, check names it', async () => {
      const lying = structuredClone(manifest) as typeof manifest & {
        VLinkBagSegments: { count: number; urls: { count: number }[] }[];
      };
      lying.VLinkBagSegments[3]!.count += 1;
      lying.VLinkBagSegments[3]!.urls[0]!.count += 1;
      await put(`lying${ext}`, new TextEncoder().encode(JSON.stringify(lying, null, 4)));
      const reader = await BagReader.create(`${prefix}lying${ext}`);
      try {
        assert.equal(reader.getInfo().splitCount, 6);
        let read = 0;
        await assert.rejects(
          (async () => {
            for await (const _ of reader.frames({ beginTime: 2500 })) read++;
          })(),
          (e: Error & { code?: string }) => {
            assert.equal(e.code, 'CORRUPT_FILE');
            assert.match(
              e.message,
              new RegExp(
                `segment "${manifest.VLinkFiles[3]!.replace('.', '\\.')}" is not what the manifest says: the manifest says 1001 frames, the segment holds 1000`,
              ),
            );
            return true;
          },
        );
        assert.equal(read, 501, 'the frames of the segment before it were read');
        const report = await reader.verify({ quick: true });
        assert.equal(report.ok, false);
        assert.ok(
          report.problems.some((p) =>
            p.message.includes(`VLinkBagSegments entry of ${manifest.VLinkFiles[3]} is wrong`),
          ),
          JSON.stringify(report.problems),
        );
      } finally {
        reader.close();
      }
    });
  });
}
