import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, SchemaType, type Frame } from '@vlink/bag';
import { ndjson, runCli, START_MS, writeBag, SLOW } from './testing/harness.js';
import { sampleBags, withReader } from './testing/sample-bags.js';

const { tmp, vdb, vcap } = sampleBags();

/** The NDJSON of a bag: every frame field and payload, so equal output means byte-exact frames. */
async function catOf(path: string, ...args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(['cat', path, ...args]);
  assert.equal(code, 0, stderr);
  return stdout;
}

/** `cat` of the fixture .vdb, computed once: the reference every round trip is compared with. */
let original: Promise<string> | undefined;
const originalCat = () => (original ??= catOf(vdb));

describe('cat | record --stdin', () => {
  test('round-trips byte-exactly, .vdb → .vcap and .vcap → .vdb', SLOW, async () => {
    const original = await originalCat();
    const toVcap = tmp.path('piped.vcap');
    const rec = await runCli(['record', '--stdin', toVcap], { input: original });
    assert.equal(rec.code, 0, rec.stderr);
    assert.match(rec.stderr, /piped\.vcap: 200 frames \(.*\) recorded \(source ended\)/);
    const fromVcap = await catOf(toVcap);
    assert.equal(fromVcap, original);
    const back = tmp.path('piped-back.vdb');
    const rec2 = await runCli(['record', '--stdin', back, '-q'], { input: fromVcap });
    assert.equal(rec2.code, 0, rec2.stderr);
    assert.equal(rec2.stderr, '');
    assert.equal(await catOf(back), original);
  });

  test('--meta keeps the recording start, tag, losses and embedded schemas; -t overrides the tag', SLOW, async () => {
    const out = tmp.path('meta.vdb');
    const rec = await runCli(['record', '--stdin', out, '-t', 'copied', '-p', 'lzav'], {
      input: await catOf(vcap, '--meta'),
    });
    assert.equal(rec.code, 0, rec.stderr);
    const [info, schemas] = await withReader(out, (r) => [r.getInfo(), r.getSchemas()] as const);
    assert.equal(info.startTimestamp, START_MS);
    assert.equal(info.tagName, 'copied');
    assert.equal(info.compressionType, 'lzav');
    assert.equal(info.hasSchema, true);
    assert.deepEqual(
      schemas.map((s) => s.name),
      ['test.Point'],
    );
    assert.equal(await catOf(out), await originalCat());
  });

  test('a malformed line stops with its line number; what came before is a complete bag', SLOW, async () => {
    const good = (await catOf(vdb, '-e', '0.03')).trimEnd().split('\n');
    const out = tmp.path('bad-line.vdb');
    const rec = await runCli(['record', '--stdin', out], {
      input: `${good[0]}\n{"url":"/x","data":"***"}\n${good[1]}\n`,
    });
    assert.equal(rec.code, 1);
    assert.match(rec.stderr, /^vlink-bag record: <stdin>: line 2: "data" is not valid base64$/m);
    const info = await withReader(out, (r) => r.getInfo());
    assert.equal(info.hasCompleted, true);
    assert.equal(info.messageCount, 1);
    const [wrongSize, badAction, emptyLossUrl] = await Promise.all([
      runCli(['record', '--stdin', tmp.path('bad-size.vdb')], { input: '{"url":"/x","size":3,"data":"AAE="}\n' }),
      runCli(['record', '--stdin', tmp.path('bad-action.vdb')], {
        input: '{"url":"/x","action":"Publish","data":""}\n',
      }),
      // The writer refuses a loss for no url (INVALID_ARGUMENT): the line is refused where it is read.
      runCli(['record', '--stdin', tmp.path('bad-loss.vdb')], {
        input: '{"meta":{"startTimestamp":1700000000000,"losses":{"":0.5}}}\n',
      }),
    ]);
    assert.match(wrongSize.stderr, /line 1: "size" is 3 but "data" holds 2 bytes/);
    assert.match(badAction.stderr, /line 1: "action" must be one of Pub, Sub/);
    assert.match(emptyLossUrl.stderr, /line 1: "meta.losses" names an empty url/);
  });

  test('record needs a source and refuses to overwrite without -f', SLOW, async () => {
    const [none, exists] = await Promise.all([
      runCli(['record', tmp.path('none.vdb')]),
      runCli(['record', '--stdin', vdb], { input: '' }),
    ]);
    assert.equal(none.code, 2);
    assert.match(
      none.stderr,
      /record needs a source: --stdin, --from ws:\/\/host:port or --from rosbridge:\/\/host:port/,
    );
    assert.equal(exists.code, 1);
    assert.match(exists.stderr, /drive\.vdb: already exists \(pass -f\/--force to overwrite\)/);
  });
});

describe('clone', () => {
  test(
    'copies the header (tag, process name, timezone) .vdb → .vcap → .mcap → .vdb; --no-header drops it',
    SLOW,
    async () => {
      // A timezone no test machine has, so a copy that fell back to the local one would show.
      const source = tmp.path('header.vdb');
      await writeBag(source, { tag: 'run-42', processName: 'lidar_recorder', timezone: -347 });
      const header = (info: { tagName: string; processName: string; timezone: number; startTimestamp: number }) => [
        info.tagName,
        info.processName,
        info.timezone,
        info.startTimestamp,
      ];
      const expected = ['run-42', 'lidar_recorder', -347, START_MS];
      assert.deepEqual(header(await withReader(source, (r) => r.getInfo())), expected);
      const chain = [source, tmp.path('header.vcap'), tmp.path('header.mcap'), tmp.path('header-back.vdb')];
      for (let i = 1; i < chain.length; i++) {
        const { code, stderr } = await runCli(['clone', chain[i - 1]!, chain[i]!, '-q']);
        assert.equal(code, 0, stderr);
        assert.deepEqual(header(await withReader(chain[i]!, (r) => r.getInfo())), expected, chain[i]);
      }
      assert.equal(await catOf(chain.at(-1)!), await catOf(source));
      const dropped = tmp.path('header-dropped.vcap');
      const { code, stderr } = await runCli(['clone', source, dropped, '-q', '--no-header']);
      assert.equal(code, 0, stderr);
      const info = await withReader(dropped, (r) => r.getInfo());
      assert.notEqual(info.processName, 'lidar_recorder');
      assert.notEqual(info.timezone, -347);
      assert.equal(info.tagName, 'Empty');
      // --tag still names the copy's tag when the header is kept.
      const tagged = tmp.path('header-tagged.vcap');
      assert.equal((await runCli(['clone', source, tagged, '-q', '-t', 'renamed'])).code, 0);
      assert.deepEqual(header(await withReader(tagged, (r) => r.getInfo())), [
        'renamed',
        'lidar_recorder',
        -347,
        START_MS,
      ]);
    },
  );

  test('converts .vdb ↔ .vcap byte-exactly, with compression', SLOW, async () => {
    const original = await originalCat();
    const toVcap = tmp.path('clone.vcap');
    const a = await runCli(['clone', vdb, toVcap, '-p', 'zstd']);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /clone\.vcap: 200 frames \(.*\) cloned from /);
    const back = tmp.path('clone-back.vdb');
    const b = await runCli(['clone', toVcap, back, '-p', 'lzav', '-q']);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(b.stdout, '');
    assert.deepEqual(await Promise.all([catOf(toVcap), catOf(back)]), [original, original]);
    const [vcapInfo, backInfo] = [
      await withReader(toVcap, (r) => r.getInfo()),
      await withReader(back, (r) => r.getInfo()),
    ];
    assert.equal(vcapInfo.compressionType, 'zstd');
    assert.equal(backInfo.compressionType, 'lzav');
    assert.equal(backInfo.tagName, 'fixture');
    assert.equal(backInfo.startTimestamp, START_MS);
  });

  test('applies the play filters and time window', SLOW, async () => {
    const out = tmp.path('clip.vdb');
    const r = await runCli([
      'clone',
      vdb,
      out,
      '-u',
      '/imu,/camera',
      '-k',
      '/camera',
      '-b',
      '1',
      '-e',
      '1.5',
      '-t',
      'clip',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const [clipped, expected] = await Promise.all([catOf(out), catOf(vdb, '-u', '/imu', '-b', '1', '-e', '1.5')]);
    assert.equal(clipped, expected);
    assert.equal((await withReader(out, (reader) => reader.getInfo())).tagName, 'clip');
  });

  test('refuses to overwrite its source, also through a symlink, even with -f', SLOW, async () => {
    const alias = tmp.path('alias.vdb');
    symlinkSync(vdb, alias);
    for (const r of await Promise.all([vdb, alias].map((target) => runCli(['clone', vdb, target, '-f'])))) {
      assert.equal(r.code, 1);
      assert.match(r.stderr, /: refusing to overwrite the source bag\n$/);
    }
  });
});

describe("the source's counters by cause", () => {
  /** A bag that dropped frames and whose application counted its own misses (`writer.count`). */
  async function countedBag(path: string, counts: ReadonlyArray<[string, string, number]>): Promise<void> {
    const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: START_MS });
    for (let i = 0; i < 20; i++)
      writer.push({
        timestamp: i * 10_000,
        url: i % 2 ? '/state' : '/cam',
        data: new Uint8Array([i]),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    for (const [url, cause, n] of counts) writer.count(url, cause, n);
    await writer.close();
  }
  const countersOf = async (path: string) =>
    (JSON.parse((await runCli(['info', path, '--json'])).stdout) as { counters?: unknown }).counters;

  test('clone, split and merge carry them (merge sums them per url and cause)', SLOW, async () => {
    const [a, b] = [tmp.path('counted-a.vdb'), tmp.path('counted-b.vcap')];
    await countedBag(a, [
      ['/state', 'missedSlot', 3],
      ['/cam', 'readTimeout', 2],
    ]);
    await countedBag(b, [['/state', 'missedSlot', 4]]);
    const whole = { '/state': { missedSlot: 3 }, '/cam': { readTimeout: 2 } };
    assert.deepEqual(await countersOf(a), whole);
    for (const ext of ['.vcap', '.vdb', '.vdbx', '.vcapx']) {
      const out = tmp.path(`counted-clone${ext}`);
      assert.equal((await runCli(['clone', a, out, '-q'])).code, 0);
      assert.deepEqual(await countersOf(out), whole, ext);
    }
    const onlyState = tmp.path('counted-state.vdb');
    assert.equal((await runCli(['clone', a, onlyState, '-u', '/state', '-q'])).code, 0);
    assert.deepEqual(await countersOf(onlyState), { '/state': { missedSlot: 3 } }, 'the urls the copy keeps');
    const cut = tmp.path('counted-split.vdb');
    assert.equal((await runCli(['split', '-f', a, '-o', cut, '-e', '0.1', '-q'])).code, 0);
    assert.deepEqual(await countersOf(cut), whole);
    const merged = tmp.path('counted-merged.vcap');
    assert.equal((await runCli(['merge', a, b, '-o', merged, '-q'])).code, 0);
    assert.deepEqual(await countersOf(merged), { '/state': { missedSlot: 7 }, '/cam': { readTimeout: 2 } });
  });
});

describe('split recordings', () => {
  test('clone into .vdbx and .vcapx (split by time), read back byte-exactly, tag the manifest', SLOW, async () => {
    const dir = tmp.path('');
    const [vdbx, vcapx] = [tmp.path('split.vdbx'), tmp.path('split.vcapx')];
    const [a, b] = await Promise.all([
      runCli(['clone', vdb, vdbx, '-y', '0.5', '-q']),
      runCli(['clone', vcap, vcapx, '-y', '0.5', '-o', '-q']),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const [catX, catY, info] = await Promise.all([catOf(vdbx), catOf(vcapx), runCli(['info', vdbx])]);
    assert.equal(catX, await originalCat());
    assert.equal(catY, await originalCat());
    assert.match(info.stdout, /^Split Count: +5 \(By time: 0\.50s\)$/m);
    const tag = await runCli(['tag', vcapx, 'split-tag']);
    assert.equal(tag.code, 0, tag.stderr);
    assert.equal((await withReader(vcapx, (r) => r.getInfo())).tagName, 'split-tag');
    // Segments named by time would land on the .vcapx source's own segments in the same directory.
    const clash = await runCli(['clone', vcapx, `${dir}/again.vcapx`, '-y', '0.5', '-o']);
    assert.equal(clash.code, 1);
    assert.match(
      clash.stderr,
      /again\.vcapx: its segments could overwrite \d{4}-\d\d-\d\d_[\d-]+\.vcap of a source bag; write to another directory or drop --split-name-by-time\n$/,
    );
  });
});

describe('merge', () => {
  const frame = (timestamp: number, url: string, byte: number): Frame => ({
    timestamp,
    url,
    data: new Uint8Array([byte]),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  });

  test('orders frames by absolute time; equal instants keep input order, 1 µs apart', SLOW, async () => {
    const a = tmp.path('a.vdb');
    const b = tmp.path('b.vcap');
    // b starts 500 ms after a: its frame at 0 is at absolute 500 ms.
    await writeBag(a, {
      frames: [frame(0, '/a', 1), frame(400_000, '/a', 2), frame(500_000, '/a', 3), frame(900_000, '/a', 4)],
    });
    await writeBag(b, {
      startMs: START_MS + 500,
      frames: [frame(0, '/b', 10), frame(100_000, '/b', 11), frame(350_000, '/b', 12)],
    });
    const out = tmp.path('merged.vdb');
    const r = await runCli(['merge', a, b, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /merged\.vdb: 7 frames \(7B\) merged from 2 bags/);
    const lines = ndjson(await catOf(out)).map((line) => `${line['url']}@${line['timestamp']}`);
    assert.deepEqual(
      lines,
      ['/a@0', '/a@400000', '/a@500000', '/b@500001', '/b@600000', '/a@900000', '/b@850000'].sort(
        (x, y) => Number(x.split('@')[1]) - Number(y.split('@')[1]),
      ),
    );
    const info = await withReader(out, (reader) => reader.getInfo());
    assert.equal(info.startTimestamp, START_MS);
    assert.equal(info.messageCount, 7);
  });

  test('windows are relative to the earliest start; --check-gap refuses far-apart inputs', SLOW, async () => {
    const a = tmp.path('a.vdb');
    const b = tmp.path('b.vcap');
    const out = tmp.path('merged-window.vcap');
    const r = await runCli(['merge', a, b, '-o', out, '-b', '0.45', '-e', '0.9', '-u', '/b', '-u', '/a']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      ndjson(await catOf(out)).map((l) => `${l['url']}@${l['timestamp']}`),
      ['/a@500000', '/b@500001', '/b@600000', '/b@850000', '/a@900000'],
    );
    const far = tmp.path('far.vdb');
    await writeBag(far, { startMs: START_MS + 7_200_000, frames: [frame(0, '/far', 1)] });
    const refused = await runCli(['merge', a, far, '-o', tmp.path('never.vdb')]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /far\.vdb: recording starts are 7200\.000 s apart, more than --check-gap 3600 s/);
    const one = await runCli(['merge', a, '-o', tmp.path('never.vdb')]);
    assert.equal(one.code, 2);
    assert.match(one.stderr, /merge needs at least two input bags/);
  });

  test('an input that is not a bag fails before anything is written', SLOW, async () => {
    const junk = tmp.path('junk.vdb');
    writeFileSync(junk, 'junk'.repeat(500));
    const r = await runCli(['merge', vdb, junk, '-o', tmp.path('never2.vdb')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^vlink-bag merge: .*junk\.vdb: /);
  });
});
