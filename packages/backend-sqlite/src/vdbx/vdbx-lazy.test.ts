import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, type CursorQuery, type Frame, resolveWriterConfig, SchemaType } from '@vlink/bag-core';
import type { SplitReader } from '@vlink/bag-core/internal';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir } from '../testing/util.js';

/**
 * A `.vdbx` whose manifest says what each segment holds is read opening a segment only when a read reaches it, and
 * reads exactly what the same recording reads when every segment is opened up front (a manifest without the facts).
 */
const backend = createSqliteBackend({ driver: await loadDriver() });
const tmp = tempDir('vdbx-lazy');
after(() => tmp.cleanup());

/** 10 s of frames, one every 100 ms on two urls, and one frame of a rare url at 5.05 s: ten one-second segments. */
function frames(): Frame[] {
  const out: Frame[] = Array.from({ length: 100 }, (_, i) => ({
    timestamp: 1000 + i * 100_000,
    url: i % 2 === 0 ? 'dds://even' : 'dds://odd',
    data: pattern(64 + i, i),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  }));
  out.splice(51, 0, { ...out[50]!, timestamp: 5_050_000, url: 'dds://rare', data: pattern(9, 7) });
  return out;
}

const path = join(tmp.dir, 'drive.vdbx');
const eagerPath = join(tmp.dir, 'eager.vdbx');
const writer = await backend.createWriter(path, resolveWriterConfig({ splitByTime: 1000 }), createTestContext());
for (const f of frames()) writeFrame(writer, f);
writer.close();
// The same segments behind a manifest without the facts (as VLink and older versions write it).
const { VLinkBagSegments: _, ...withoutFacts } = JSON.parse(readFileSync(path, 'utf8'));
writeFileSync(eagerPath, JSON.stringify(withoutFacts, null, 4));

const open = async (p: string) => (await backend.openReader(p, {})) as SplitReader;
const read = (r: SplitReader, query: CursorQuery = {}) =>
  Array.from(r.frames(query), (f) => ({ ...f, data: f.data.slice() }));

describe('.vdbx segments opened when a read reaches them', () => {
  test('info opens no segment and equals the info of a reader that opened them all', async () => {
    const lazy = await open(path);
    const eager = await open(eagerPath);
    assert.deepEqual(lazy.lazyState, { opens: 0, open: 0 });
    assert.equal(eager.lazyState, undefined);
    assert.equal(lazy.info().splitCount, 10);
    assert.deepEqual(lazy.info(), { ...eager.info(), path });
    lazy.close();
    eager.close();
  });

  test('a time window opens the segments it overlaps; a url filter those holding the url', async () => {
    const lazy = await open(path);
    const eager = await open(eagerPath);
    const window = { beginUs: 3_450_000, endUs: 4_650_000 };
    assert.deepEqual(read(lazy, window), read(eager, window));
    assert.equal(read(lazy, window).length, 12);
    assert.deepEqual(lazy.lazyState, { opens: 2, open: 2 });
    const rare = read(lazy, { urls: ['dds://rare'] });
    assert.deepEqual(rare, read(eager, { urls: ['dds://rare'] }));
    assert.deepEqual(
      rare.map((f) => f.timestamp),
      [5_050_000],
    );
    assert.equal(lazy.lazyState!.opens, 3, 'only the segment of 5 s more');
    lazy.close();
    eager.close();
  });

  test('a whole read opens each segment once and keeps at most four open; schemas and splitIndex as before', async () => {
    const lazy = await open(path);
    const eager = await open(eagerPath);
    const cursor = lazy.frames({});
    let n = 0;
    let most = 0;
    for (const _ of cursor) {
      n++;
      most = Math.max(most, lazy.lazyState!.open);
    }
    assert.equal(n, 101);
    assert.ok(most <= 5, `${most} segments open at once (four idle and the one read)`);
    assert.deepEqual(lazy.lazyState, { opens: 10, open: 4 });
    assert.equal(lazy.splitIndex(), 9);
    assert.deepEqual(read(lazy), read(eager));
    assert.deepEqual(lazy.schemas(), eager.schemas());
    lazy.close();
    eager.close();
  });

  test('a segment that holds something else than the facts say is CORRUPT_FILE when reached, and check reports it', async () => {
    const lying = JSON.parse(readFileSync(path, 'utf8'));
    lying.VLinkBagSegments[4].urls[0].size += 1;
    const lyingPath = join(tmp.dir, 'lying.vdbx');
    writeFileSync(lyingPath, JSON.stringify(lying, null, 4));
    const reader = await open(lyingPath);
    assert.deepEqual(read(reader, { endUs: 3_000_000 }).length, 30, 'segments before it read');
    assert.throws(
      () => read(reader, { beginUs: 4_500_000 }),
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_FILE' &&
        /segment "drive\.5\.vdb" is not what the manifest says: the manifest says 5 frames \(\d+ bytes\) of dds:\/\/even/.test(
          e.message,
        ),
    );
    const report = await reader.verify({ quick: true });
    assert.equal(report.ok, false);
    assert.deepEqual(
      report.problems.map((p) => p.message.replace(/\(\d+ bytes\)/g, '(n bytes)')),
      [
        'manifest: VLinkBagSegments entry of drive.5.vdb is wrong: the manifest says 5 frames (n bytes) of dds://even, the segment holds 5 (n bytes)',
      ],
    );
    reader.close();
  });

  test('facts that cannot be true are a manifest problem: not used, check fails naming them', async () => {
    const broken = JSON.parse(readFileSync(path, 'utf8'));
    broken.VLinkBagSegments[2].file = 'other.vdb';
    const brokenPath = join(tmp.dir, 'broken.vdbx');
    writeFileSync(brokenPath, JSON.stringify(broken, null, 4));
    const reader = await open(brokenPath);
    assert.equal(reader.lazyState, undefined, 'every segment opened, as without facts');
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(read(reader).length, 101);
    const report = await reader.verify({ quick: true });
    assert.deepEqual(
      report.problems.map((p) => p.message),
      ['manifest: VLinkBagSegments[2] names "other.vdb", VLinkFiles[2] is "drive.3.vdb"'],
    );
    reader.close();
  });
});
