import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagReader, BagWriter, type Frame, SchemaType } from '@vlink/bag';
import { s3TestServer } from '@vlink/fixtures/s3';
import { registerS3 } from './register.js';
import { S3Client } from './s3-client.js';
import { listObjects } from './s3-list.js';
import { stageS3 } from './s3-staging.js';
import { MIN_PART_BYTES, uploadFile } from './s3-upload.js';

/** Recordings written to s3:// urls against a real S3 server (moto): uploaded whole, or not at all. */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-s3-write-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const staging = join(dir, 'staging');

/** 4500 frames of 1–4 KiB over 4.5 s (≈ 11 MiB: a .vcap goes up in three 5 MiB parts). */
function frames(): Frame[] {
  return Array.from({ length: 4500 }, (_, i) => ({
    timestamp: 1_000 + i * 1_000,
    url: ['/lidar', '/pose', '/log'][i % 3]!,
    // Incompressible enough (a multiplicative hash) that the files keep their size.
    data: Uint8Array.from(
      { length: 1024 + ((i * 37) % 3072) },
      (_, j) => ((i * 2_654_435_761 + j * 40_503) >>> 13) & 0xff,
    ),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  }));
}

/** A fetch that fails the second part of any multipart upload (a dropped connection), the rest reaching moto. */
function failingSecondPart(): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.searchParams.get('partNumber') === '2') throw new TypeError('fetch failed: connection reset');
    return fetch(input, init);
  };
}

describe('writing to s3://', { skip }, () => {
  let client: S3Client;
  before(async () => {
    client = new S3Client(s3Options());
    await client.createBucket('rec');
    registerS3(s3Options({ stagingDir: staging, partBytes: MIN_PART_BYTES }));
  });

  for (const [ext, mode] of [
    ['.vcap', 'sync'],
    ['.vcap', 'worker'],
    ['.vdb', 'sync'],
    ['.vcapx', 'sync'],
    ['.vdbx', 'worker'],
  ] as const) {
    test(`BagWriter.create('s3://…${ext}') (${mode}): every frame reads back from S3, nothing left staged`, async () => {
      const folder = `${mode}-${ext.slice(1)}`;
      const url = `s3://rec/${folder}/drive${ext}`;
      const split = ext.endsWith('x');
      const writer = await BagWriter.create(url, {
        syncMode: mode === 'sync',
        startTimestamp: 1_700_000_000_000,
        ...(split ? { splitByTime: 2000 } : {}),
      });
      const written = frames();
      for (const f of written) writer.push(f);
      await writer.close();
      const keys = (await listObjects(client, 'rec', `${folder}/`)).map((o) => o.key).sort();
      const names = split
        ? [ext, `${ext}.json`, `.1${ext.slice(0, -1)}`, `.2${ext.slice(0, -1)}`, `.3${ext.slice(0, -1)}`]
        : [ext, `${ext}.json`];
      const expectedKeys = names.map((n) => `${folder}/drive${n}`);
      assert.deepEqual(keys, expectedKeys.sort());
      const reader = await BagReader.create(url);
      try {
        assert.equal(reader.getInfo().hasCompleted, true);
        assert.equal(reader.getInfo().splitCount, split ? 3 : 1);
        let i = 0;
        for await (const f of reader.frames()) {
          const w = written[i++]!;
          assert.deepEqual([f.url, f.timestamp, f.data], [w.url, w.timestamp, w.data]);
        }
        assert.equal(i, written.length);
      } finally {
        reader.close();
      }
      assert.deepEqual(readdirSync(staging), [], 'the staging copy is removed once uploaded');
    });
  }

  test('a split recording uploads each segment once the writer moved past it, the manifest only at close', async () => {
    const url = 's3://rec/live/drive.vcapx';
    const writer = await BagWriter.create(url, {
      syncMode: true,
      startTimestamp: 1_700_000_000_000,
      splitByTime: 2000,
    });
    const written = frames();
    for (const f of written.slice(0, 3000)) writer.push(f); // 3 s: the first segment is closed, the second open
    const keys = async () => (await listObjects(client, 'rec', 'live/')).map((o) => o.key).sort();
    const deadline = Date.now() + 20_000;
    while (!(await keys()).includes('live/drive.1.vcap') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await keys(), ['live/drive.1.vcap'], 'the closed segment is up; no manifest yet');
    for (const f of written.slice(3000)) writer.push(f);
    await writer.close();
    assert.deepEqual(await keys(), [
      'live/drive.1.vcap',
      'live/drive.2.vcap',
      'live/drive.3.vcap',
      'live/drive.vcapx',
      'live/drive.vcapx.json',
    ]);
  });

  test('a late split notice uploads only the segment it closed, never a newer one still being written', async () => {
    // A worker writer may have split twice before the first notice reaches this thread: segments 1 and 2 are in the
    // folder when segment 1's notice comes. Uploading 2 then would put its first bytes on S3 for good (it counts as
    // started, so the commit would not send it again); the commit must send its final bytes.
    const stage = stageS3(client, 's3://rec/late/drive.vdbx', { stagingDir: staging });
    const folder = join(stage.localPath, '..');
    writeFileSync(join(folder, 'drive.1.vdb'), 'segment one, closed');
    writeFileSync(join(folder, 'drive.2.vdb'), 'segment two, half');
    stage.segmentClosed(join(folder, 'drive.1.vdb'));
    // Let the upload queue run (until segment 1 is up, and a moment longer) before segment 2 is finished.
    const keys = async () => (await listObjects(client, 'rec', 'late/')).map((o) => o.key);
    const deadline = Date.now() + 20_000;
    while (!(await keys()).includes('late/drive.1.vdb') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual(await keys(), ['late/drive.1.vdb'], 'only the closed segment went up');
    writeFileSync(join(folder, 'drive.2.vdb'), 'segment two, whole');
    writeFileSync(stage.localPath, '{"manifest":true}');
    await stage.commit();
    const text = async (key: string) =>
      new TextDecoder().decode((await client.getRange({ bucket: 'rec', key }, 0, 100)).bytes);
    assert.equal(await text('late/drive.1.vdb'), 'segment one, closed');
    assert.equal(await text('late/drive.2.vdb'), 'segment two, whole');
    assert.equal(await text('late/drive.vdbx'), '{"manifest":true}');
  });

  test('a failed part aborts the multipart upload: no object, no upload left, the staging copy kept', async () => {
    const failing = new S3Client(s3Options({ fetch: failingSecondPart() }));
    const stage = stageS3(failing, 's3://rec/failed/drive.vcap', { stagingDir: staging, partBytes: MIN_PART_BYTES });
    const bytes = Uint8Array.from({ length: 2 * MIN_PART_BYTES + 1000 }, (_, i) => (i * 2_654_435_761) >>> 24);
    writeFileSync(stage.localPath, bytes);
    await assert.rejects(stage.commit(), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'IO_ERROR');
      assert.match(
        e.message,
        /did not reach s3:\/\/rec\/failed\/drive\.vcap .*multipart upload aborted.*connection reset/,
      );
      assert.ok(e.message.includes(join(staging, 'vlink-upload-')), e.message);
      return true;
    });
    assert.deepEqual(readFileSync(stage.localPath), Buffer.from(bytes), 'every recorded byte is kept locally');
    await assert.rejects(client.getRange({ bucket: 'rec', key: 'failed/drive.vcap' }, 0, 1), /not found on S3 \(404/);
    const uploads = await client.getText(client.bucketUrl('rec', { uploads: '' }), 's3://rec');
    assert.doesNotMatch(uploads, /<Upload>/, 'the multipart upload was aborted');
    rmSync(join(stage.localPath, '..'), { recursive: true, force: true });
  });

  test('uploadFile: an object bigger than a part arrives whole, byte for byte', async () => {
    const path = join(dir, 'big.bin');
    const bytes = Uint8Array.from({ length: MIN_PART_BYTES + 12_345 }, (_, i) => (i * 40_503) >>> 7);
    writeFileSync(path, bytes);
    const before = client.stats.requests;
    await uploadFile(client, path, { bucket: 'rec', key: 'big.bin' }, { partBytes: MIN_PART_BYTES });
    assert.equal(client.stats.requests - before, 4, 'create, two parts, complete');
    const { bytes: got, objectSize } = await client.getRange({ bucket: 'rec', key: 'big.bin' }, 0, bytes.length);
    assert.equal(objectSize, bytes.length);
    assert.deepEqual(got, bytes);
    assert.ok(!existsSync(join(dir, 'big.bin.tmp')));
  });
});
