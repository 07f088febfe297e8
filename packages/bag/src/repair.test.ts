import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  BagReader,
  BagWriter,
  type Frame,
  type MaintenanceProgress,
  repairBag,
  SchemaType,
} from './index.js';

// repairBag on every runtime: it never loses a frame a reader can read, keeps the original (or writes elsewhere),
// reports per url, and rewrites manifests whose counts cannot be true.
const dir = mkdtempSync(join(tmpdir(), 'vlink-repair-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function frames(n: number): Frame[] {
  return Array.from({ length: n }, (_, i) => {
    const data = new Uint8Array(3000 + (i % 11) * 10);
    for (let j = 0; j < data.length; j++) data[j] = (i * 7 + (j >> 3)) & 0xff;
    return {
      timestamp: 1000 + i * 1000,
      url: i % 3 === 0 ? '/rpc' : '/cam',
      data,
      serType: i % 3 === 0 ? 'pb.Req|pb.Resp' : 'raw.Cam',
      schemaType: SchemaType.Raw,
      actionType: i % 3 === 0 ? ActionType.ClientRequest : ActionType.Publish,
    };
  });
}

async function record(path: string, n: number, config = {}): Promise<void> {
  const writer = await BagWriter.create(path, { syncMode: true, cacheSize: 64 * 1024, ...config });
  for (const f of frames(n)) writer.push(f);
  await writer.close();
}

async function readAll(path: string): Promise<string[]> {
  const reader = await BagReader.create(path);
  try {
    const out: string[] = [];
    reader.openCursor();
    for (let f = reader.next(); f; f = reader.next())
      out.push(`${f.url}@${f.timestamp}:${f.data.length}:${f.data[100]}`);
    return out;
  } finally {
    reader.close();
  }
}

const expected = frames(300).map((f) => `${f.url}@${f.timestamp}:${f.data.length}:${f.data[100]}`);

describe('repairBag', () => {
  const bags: Record<string, string> = {};
  before(async () => {
    for (const ext of ['.vcap', '.vdb']) {
      bags[ext] = join(dir, `whole${ext}`);
      await record(bags[ext], 300, ext === '.vcap' ? { compress: 'zstd' } : { compress: 'lzav' });
    }
  });

  for (const ext of ['.vcap', '.vdb']) {
    test(`${ext} cut in the middle: the frames before the cut, in order; the original kept as .bak`, async () => {
      const cut = join(dir, `cut${ext}`);
      copyFileSync(bags[ext]!, cut);
      truncateSync(cut, Math.floor(statSync(cut).size * 0.6));
      const before = readFileSync(cut);
      const report = await repairBag(cut);
      assert.equal(report.replaced, true);
      assert.equal(report.backup, `${cut}.bak`);
      assert.deepEqual(readFileSync(`${cut}.bak`), before);
      assert.ok(report.frames >= report.readableFrames, `${report.frames} ≥ ${report.readableFrames}`);
      assert.ok(report.frames > 50 && report.frames < 300, `${report.frames} frames kept`);
      const got = await readAll(cut);
      assert.deepEqual(got, expected.slice(0, got.length), 'a prefix of the recording, byte for byte');
      assert.equal(got.length, report.frames);
      const kept = report.urls.reduce((n, u) => n + u.recoveredFrames, 0);
      assert.equal(kept, report.frames, 'per url sums to the total');
      const reader = await BagReader.create(cut);
      assert.equal((await reader.verify()).ok, true);
      reader.close();
    });

    test(`${ext} with output: the input untouched, no backup; a second repair of a clean bag is lossless`, async () => {
      const cut = join(dir, `cut-out${ext}`);
      const out = join(dir, `repaired${ext}`);
      copyFileSync(bags[ext]!, cut);
      truncateSync(cut, Math.floor(statSync(cut).size * 0.8));
      const before = readFileSync(cut);
      const report = await repairBag(cut, { output: out });
      assert.equal(report.replaced, false);
      assert.equal(report.output, out);
      assert.deepEqual(readFileSync(cut), before);
      assert.ok(!existsSync(`${cut}.bak`));
      const again = await repairBag(out, { backup: false });
      assert.equal(again.lossless, true, JSON.stringify(again.problems));
      assert.equal(again.frames, report.frames);
      assert.ok(!existsSync(`${out}.bak`));
    });
  }

  test('a flipped payload byte in a .vcap: reads refuse the chunk (CRC), check names its offset', async () => {
    const flipped = join(dir, 'flipped.vcap');
    await record(flipped, 300);
    const bytes = readFileSync(flipped);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    writeFileSync(flipped, bytes);
    const reader = await BagReader.create(flipped);
    try {
      await assert.rejects(
        (async () => {
          for await (const _ of reader.frames()) void _;
        })(),
        (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /CRC mismatch/.test(e.message),
      );
      const check = await reader.verify();
      assert.equal(check.ok, false);
      assert.ok(check.problems.some((p) => /CRC/.test(p.message) && typeof p.offset === 'number'));
    } finally {
      reader.close();
    }
    // Without the check the frames come back, and the damaged one differs: what the CRC protects against.
    const unchecked = await BagReader.create(flipped, { verifyCrc: false });
    const got: string[] = [];
    for await (const f of unchecked.frames()) got.push(`${f.url}@${f.timestamp}:${f.data.length}:${f.data[100]}`);
    unchecked.close();
    assert.equal(got.length, 300);
  });

  // Before, a directory named like a .vdb got to SQLite and failed with "the repair failed: EISDIR".
  test('what is no bag file is refused before anything is read or written: missing, a directory', async () => {
    await assert.rejects(repairBag(join(dir, 'missing.vdb')), { code: 'NOT_FOUND', message: /no such bag file/ });
    for (const ext of ['.vdb', '.vcap']) {
      const folder = join(dir, `folder${ext}`);
      mkdirSync(folder);
      await assert.rejects(repairBag(folder), { code: 'INVALID_ARGUMENT', message: /is a directory, not a regular/ });
      assert.deepEqual(readdirSync(folder), []);
    }
  });

  test('a whole .vcap repairs losslessly: every frame, nothing lost', async () => {
    const copy = join(dir, 'whole-copy.vcap');
    copyFileSync(bags['.vcap']!, copy);
    const report = await repairBag(copy);
    assert.deepEqual([report.frames, report.lostFrames, report.lostBytes, report.lossless], [300, 0, 0, true]);
    assert.deepEqual(await readAll(copy), expected);
  });

  for (const ext of ['.vcap', '.vdb', '.vcapx', '.vdbx']) {
    test(`${ext}: onProgress reports done growing monotonically to total, with steps on the way`, async () => {
      const path = join(dir, `progress${ext}`);
      const n = 2600; // more than two of the .vdb salvage's 1024-row steps
      const writer = await BagWriter.create(path, { syncMode: true, cacheSize: 16 * 1024, splitBySize: 40_000 });
      for (let i = 0; i < n; i++)
        writer.push({
          timestamp: 1000 + i * 1000,
          url: '/cam',
          data: new Uint8Array(48).fill(i & 0xff),
          serType: 'raw.Cam',
          schemaType: SchemaType.Raw,
          actionType: ActionType.Publish,
        });
      await writer.close();
      const seen: MaintenanceProgress[] = [];
      const report = await repairBag(path, { backup: false, onProgress: (p) => seen.push({ ...p }) });
      assert.equal(report.frames, n);
      assert.ok(seen.length >= 2, `${seen.length} reports`);
      const { total, unit } = seen[0]!;
      assert.equal(unit, ext.endsWith('x') ? 'segments' : ext === '.vdb' ? 'rows' : 'bytes');
      let last = 0;
      for (const p of seen) {
        assert.deepEqual([p.total, p.unit], [total, unit]);
        assert.ok(p.done >= last && p.done <= total, `done ${p.done} after ${last} of ${total}`);
        last = p.done;
      }
      assert.equal(last, total);
      assert.ok(
        seen.some((p) => p.done > 0 && p.done < total),
        'steps on the way',
      );
    });
  }

  for (const bad of ['1e300', '-5']) {
    test(`.vcapx whose manifest count is ${bad}: read from the segments, check fails, repair rewrites it`, async () => {
      const manifest = join(dir, `absurd${bad}.vcapx`);
      await record(manifest, 300, { splitBySize: 200_000 });
      writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/"count": 300,/, `"count": ${bad},`));
      const reader = await BagReader.create(manifest);
      assert.deepEqual([reader.getInfo().messageCount, reader.getInfo().hasCompleted], [300, false]);
      const check = await reader.verify();
      reader.close();
      assert.equal(check.ok, false);
      assert.ok(check.problems.some((p) => /VLinkHeader\.count/.test(p.message)));
      const report = await repairBag(manifest);
      assert.equal(report.frames, 300);
      assert.match(readFileSync(manifest, 'utf8'), /"count": 300,/);
      const after = await BagReader.create(manifest);
      assert.equal((await after.verify()).ok, true);
      after.close();
      assert.deepEqual(await readAll(manifest), expected);
    });
  }
});
