import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagReader, BagWriter, registerByteSourceScheme, SchemaType } from '@vlink/bag';
import { s3TestServer } from '@vlink/fixtures/s3';
import { registerS3 } from './register.js';
import { S3ByteSource } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { readBag, recordedFrames } from './testing/recorded-frames.js';

/** `.vcapx`/`.vdbx` on a real S3 server (moto): read segment by segment, equal to the local recording. */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-s3-split-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every byte source the readers open, to count what they fetched. */
const opened: S3ByteSource[] = [];

for (const ext of ['.vcapx', '.vdbx']) {
  describe(`BagReader over S3 (${ext})`, { skip }, () => {
    const folder = mkdtempSync(join(dir, 'rec-'));
    const local = join(folder, `drive${ext}`);
    const url = `s3://fleet/split/${ext.slice(1)}/drive${ext}`;
    let objectBytes = 0;
    before(async () => {
      const writer = await BagWriter.create(local, {
        syncMode: true,
        startTimestamp: 1_700_000_000_000,
        tagName: 's3',
        splitByTime: 2000,
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
      const client = new S3Client(s3Options());
      await client.createBucket('fleet');
      const names = readdirSync(folder);
      assert.ok(names.length >= 4, `a manifest and three segments: ${names.join(', ')}`);
      for (const name of names) {
        const bytes = readFileSync(join(folder, name));
        objectBytes += bytes.length;
        await client.put({ bucket: 'fleet', key: `split/${ext.slice(1)}/${name}` }, bytes);
      }
      registerS3(s3Options({ cacheDir: join(dir, 'cache') }));
      // Keeps registerS3's listing; only the opener is wrapped, to count each source's requests and bytes.
      registerByteSourceScheme('s3', async (u) => {
        const source = await S3ByteSource.open(u, s3Options());
        opened.push(source);
        return source;
      });
    });

    test('info, schemas and every frame equal the local recording, byte for byte', async () => {
      const [remote, expected] = await Promise.all([readBag(url), readBag(local)]);
      assert.equal(expected.info.splitCount, 3);
      assert.equal(expected.frames.length, 6000);
      assert.deepEqual(remote.info, { ...expected.info, path: url });
      assert.deepEqual(remote.schemas, expected.schemas);
      assert.deepEqual(remote.frames, expected.frames);
    });

    if (ext === '.vcapx') {
      test('opening reads the manifest only (it says what each segment holds): no segment, no download', async () => {
        opened.length = 0;
        const reader = await BagReader.create(url);
        assert.equal(reader.getInfo().messageCount, 6000);
        reader.close();
        assert.equal(opened.length, 1, 'the manifest; segments open when a read reaches them');
        const fetched = opened.reduce((sum, s) => sum + s.stats.bytes, 0);
        assert.ok(fetched < objectBytes / 2, `${fetched} bytes fetched of ${objectBytes}`);
      });
    }

    test('a missing segment is NOT_FOUND naming it; maintenance that rewrites is refused', async () => {
      const client = new S3Client(s3Options());
      const manifest = readFileSync(local, 'utf8');
      const broken = `s3://fleet/broken/${ext.slice(1)}/drive${ext}`;
      await client.put(
        { bucket: 'fleet', key: broken.slice('s3://fleet/'.length) },
        new TextEncoder().encode(manifest),
      );
      await assert.rejects(BagReader.create(broken), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'NOT_FOUND');
        assert.match(e.message, /segment ".*" listed in the manifest does not exist/);
        return true;
      });
      await assert.rejects(BagReader.create(url, { readOnly: false }), /read-only/);
    });
  });
}
