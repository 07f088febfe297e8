import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader, BagWriter } from '@vlink/bag';
import { fixturePath } from '@vlink/fixtures';
import { runCli, SLOW, tempDir } from './testing/harness.js';

// Foreign bags through the CLI, as a user types it: a rosbag2 folder as the bag argument, a ROS 1 bag cloned in and
// out to .mcap, a read-only extension refused as an output.
const tmp = tempDir();
after(() => tmp.cleanup());
const folder = fixturePath('foreign', 'ros2', 'sqlite3');
const bag = fixturePath('foreign', 'ros1', 'lz4.bag');

describe('vlink-bag on foreign bags', () => {
  test('info on a rosbag2 folder', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['info', folder]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Message Count: +91$/m);
    assert.match(stdout, /\/imu +sensor_msgs\/msg\/Imu$/m);
    const json = await runCli(['info', folder, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const info = JSON.parse(json.stdout);
    assert.equal(info.format, 'rosbag2');
    assert.deepEqual(info.metadata.find((m: { name: string }) => m.name === 'rosbag2.custom_data').values, {
      mission: 'fixtures',
      robot: 'rover-7',
    });
  });

  test(
    'a rosbag2 bag from before Iron: info names the borrowed definitions, cat decodes, clone keeps them',
    SLOW,
    async () => {
      const humble = fixturePath('foreign', 'ros2', 'sqlite3-humble');
      const info = await runCli(['info', humble]);
      assert.equal(info.code, 0, info.stderr);
      assert.match(
        info.stdout,
        /^Definitions: +not in the bag, humble's from @foxglove\/rosmsg-msgs-common: std_msgs\/msg\/String, sensor_msgs\/msg\/Imu, shape_msgs\/msg\/SolidPrimitive$/m,
      );
      const cat = await runCli(['cat', '--decode', humble]);
      assert.equal(cat.code, 0, cat.stderr);
      const lines = cat.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(lines.find((l) => l.url === '/chatter').decoded, { data: 'hello 0' });
      assert.equal(lines.find((l) => l.url === '/imu').decoded.linear_acceleration.z, 9.81);
      assert.match(
        lines.find((l) => l.url === '/custom').decodeError,
        /no cdr schema embedded for vlink_test\/msg\/Reading/,
      );
      // The copy carries the definitions it was decoded with: it decodes alike wherever it is read.
      const out = tmp.path('humble.vcap');
      const clone = await runCli(['clone', '-q', humble, out]);
      assert.equal(clone.code, 0, clone.stderr);
      const again = await runCli(['cat', '--decode', out]);
      assert.deepEqual(
        again.stdout
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l).decoded),
        lines.map((l) => l.decoded),
      );
    },
  );

  test('check reads every message of a foreign bag and says so', SLOW, async () => {
    const text = await runCli(['check', bag]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /: ok \(91 frames checked\)$/m);
    const json = await runCli(['check', fixturePath('foreign', 'ros2', 'sqlite3-zstd-file'), '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual((({ ok, frames, problems }) => ({ ok, frames, problems }))(JSON.parse(json.stdout)), {
      ok: true,
      frames: 91,
      problems: [],
    });
  });

  test(
    'check of a damaged foreign bag points at a copy of what reads, not at fix (read-only formats)',
    SLOW,
    async () => {
      // An Apollo record whose second chunk body was overwritten by its first (found by hand: read in its place).
      const bytes = readFileSync(fixturePath('foreign', 'apollo', 'sensors.record'));
      const damaged = tmp.path('copied-body.record');
      writeFileSync(
        damaged,
        Buffer.concat([bytes.subarray(0, 5496), bytes.subarray(3443, 3443 + 2012), bytes.subarray(5496 + 2012)]),
      );
      const { code, stdout, stderr } = await runCli(['check', damaged]);
      assert.equal(code, 1);
      assert.match(stdout, /chunk body is not the one its chunk header describes/);
      assert.equal(
        stderr,
        `vlink-bag check: check failed: 1 problem (listed above); this format is read-only here: vlink-bag clone --try-to-fix ${damaged} <copy> copies what can be read\n`,
      );
      // And it does: the chunks that read are copied, and the copy says which chunk it left out (before, it failed
      // at that chunk and removed its partial output).
      const copy = tmp.path('copied-body.vcap');
      const clone = await runCli(['clone', '--try-to-fix', damaged, copy]);
      assert.equal(clone.code, 0, clone.stderr);
      assert.match(
        clone.stderr,
        /^vlink-bag clone: .*copied-body\.record: warning: read around damage: 1 chunk\(s\) that do not read skipped \((\d+) messages, as their chunk headers count them\): chunk body is not the one its chunk header describes/m,
      );
      const lost = Number(/\((\d+) messages, as their/.exec(clone.stderr)![1]);
      assert.match(clone.stdout, new RegExp(`: ${64 - lost} frames \\(`));
      const json = await runCli(['clone', '--try-to-fix', '--json', '-f', damaged, copy]);
      assert.equal(json.code, 0, json.stderr);
      assert.match(JSON.parse(json.stdout).warnings.join('\n'), /read around damage: 1 chunk\(s\) that do not read/);
    },
  );

  test(
    'a salvaged copy to .mcap carries the source records, not its account of the damage: the copy is whole',
    SLOW,
    async () => {
      // A ROS 1 bag cut inside its index: tryToFix scans its chunks, and says so under rosbag.problems. Before, a clone
      // to .mcap carried that record, and `info` of the whole copy listed the source's damage as its own problems.
      const bytes = readFileSync(bag);
      const cut = tmp.path('cut-index.bag');
      writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * 0.95)));
      const copy = tmp.path('cut-index.mcap');
      const clone = await runCli(['clone', '--try-to-fix', cut, copy]);
      assert.equal(clone.code, 0, clone.stderr);
      assert.match(clone.stderr, /warning: read around damage: the bag's index is damaged/);
      const info = JSON.parse((await runCli(['info', copy, '--json'])).stdout);
      const names = info.metadata.map((m: { name: string }) => m.name);
      assert.ok(names.includes('rosbag.connection'), names.join());
      assert.deepEqual(
        names.filter((n: string) => n.endsWith('.problems')),
        [],
      );
      const check = await runCli(['check', copy]);
      assert.equal(check.code, 0, check.stderr);
    },
  );

  test('reindex and tag of a foreign bag say they are not supported, naming the format', SLOW, async () => {
    const mcap = fixturePath('foreign', 'mcap', 'json.mcap');
    const [reindexBag, reindexFolder, tagMcap] = await Promise.all([
      runCli(['reindex', bag]),
      runCli(['reindex', folder]),
      runCli(['tag', mcap, 'x']),
    ]);
    assert.deepEqual(
      [reindexBag.code, reindexBag.stderr],
      [1, `vlink-bag reindex: ${bag}: reindex is not supported for bag files\n`],
    );
    assert.deepEqual(
      [reindexFolder.code, reindexFolder.stderr],
      [1, `vlink-bag reindex: ${folder}: reindex is not supported for rosbag2 files\n`],
    );
    assert.deepEqual(
      [tagMcap.code, tagMcap.stderr],
      [1, `vlink-bag tag: ${mcap}: tagging is not supported for .mcap files\n`],
    );
  });

  test('a merge stopped by a conflict says where, and removes its partial output', SLOW, async () => {
    // /chatter is std_msgs/String in the ROS 1 bag and std_msgs/msg/String in the ROS 2 MCAP: one url, two types.
    const out = tmp.path('conflict.vcap');
    const merged = await runCli(['merge', bag, fixturePath('foreign', 'mcap', 'ros2.mcap'), '-o', out, '-q']);
    assert.equal(merged.code, 1);
    assert.match(
      merged.stderr,
      /conflicts with the recorded "std_msgs\/String".* \(after \d+ frames?\); the partial output .*conflict\.vcap was removed\n$/,
    );
    // A closed partial output would pass for a complete merge.
    assert.ok(!existsSync(out) && !existsSync(`${out}.json`));
  });

  test(
    'a rosbag2 folder kept in several storage files reads them in turn and shows its split count',
    SLOW,
    async () => {
      const split = tmp.path('split-ros2');
      mkdirSync(split);
      for (const name of ['split_0.db3', 'split_1.db3']) copyFileSync(join(folder, 'sqlite3.db3'), join(split, name));
      const yaml = readFileSync(join(folder, 'metadata.yaml'), 'utf8');
      writeFileSync(join(split, 'metadata.yaml'), yaml.replace(/- sqlite3\.db3/g, '- split_0.db3\n  - split_1.db3'));
      const { code, stdout, stderr } = await runCli(['info', split]);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^Message Count: +182$/m);
      assert.match(stdout, /^Split Count: +2$/m);
      const single = await runCli(['info', folder]);
      assert.match(single.stdout, /^Split Count: +---$/m);
    },
  );

  test('clone a ROS 1 bag into .vdb keeps every message', SLOW, async () => {
    const out = tmp.path('from-ros1.vdb');
    const { code, stderr } = await runCli(['clone', bag, out, '-q']);
    assert.equal(code, 0, stderr);
    const read = async (path: string) => {
      const reader = await BagReader.create(path);
      const frames: string[] = [];
      for await (const f of reader.frames())
        frames.push(`${f.url} ${f.timestamp} ${Buffer.from(f.data).toString('hex')}`);
      reader.close();
      return frames.sort();
    };
    const copied = await read(out);
    assert.equal(copied.length, 91);
    assert.deepEqual(copied, await read(bag));
  });

  test('a read-only format is refused as an output, naming why', SLOW, async () => {
    const { code, stderr } = await runCli(['clone', folder, tmp.path('out.bag'), '-q']);
    assert.notEqual(code, 0);
    assert.match(stderr, /unsupported bag extension "\.bag"; \.bag is read-only/);
  });

  test(
    'clone a ROS 1 bag into .mcap: ros1 + ros1msg, every message in order with publish time and sequence',
    SLOW,
    async () => {
      const out = tmp.path('from-ros1.mcap');
      const { code, stderr } = await runCli(['clone', bag, out, '-q']);
      assert.equal(code, 0, stderr);
      const read = async (path: string) => {
        const reader = await BagReader.create(path);
        const info = reader.getInfo();
        const frames: string[] = [];
        for await (const f of reader.frames())
          frames.push(
            `${f.url} ${f.serType} ${f.timestamp} ${f.publishTime ?? f.timestamp} ${f.sequence ?? ''} ${Buffer.from(f.data).toString('hex')}`,
          );
        const schemas = reader
          .getSchemas()
          .map((s) => `${s.name} ${s.encoding} ${Buffer.from(s.data).toString('hex')}`);
        reader.close();
        return { info, frames, schemas };
      };
      const [copied, source] = [await read(out), await read(bag)];
      assert.equal(copied.info.format, 'mcap');
      assert.equal(copied.frames.length, 91);
      // Types whose first field is no Header have no sequence in the bag: the copy numbers them per channel.
      const noSeq = (lines: string[]) =>
        lines.map((l) =>
          l
            .split(' ')
            .filter((_, i) => i !== 4)
            .join(' '),
        );
      assert.deepEqual(noSeq(copied.frames), noSeq(source.frames));
      assert.deepEqual(
        copied.frames.filter((_, i) => source.frames[i]!.split(' ')[4] !== ''),
        source.frames.filter((l) => l.split(' ')[4] !== ''),
      );
      assert.deepEqual(copied.schemas, source.schemas);
      assert.deepEqual(
        copied.info.urls.map((u) => [u.url, u.ser, u.encoding]),
        source.info.urls.map((u) => [u.url, u.ser, 'ros1']),
      );
      assert.equal(copied.info.processName, source.info.processName);
    },
  );

  test(
    'fix of a sound bag rewrites its summary sidecar; of a sound foreign recording (read-only) nothing',
    SLOW,
    async () => {
      const ours = tmp.path('fix-sound-vcap');
      mkdirSync(ours);
      const writer = await BagWriter.create(join(ours, 'run.vcap'), { syncMode: true, summary: false });
      writer.push({ timestamp: 5, url: '/x', data: new Uint8Array([1]), serType: 'raw', schemaType: 3, actionType: 5 });
      await writer.close();
      const fixed = await runCli(['fix', join(ours, 'run.vcap')]);
      assert.equal(fixed.code, 0, fixed.stderr);
      assert.deepEqual(readdirSync(ours).sort(), ['run.vcap', 'run.vcap.json']);
      for (const name of ['plain.bag', 'json.mcap']) {
        const dir = tmp.path(`fix-sound-${name}`);
        mkdirSync(dir);
        const path = join(dir, name);
        copyFileSync(fixturePath('foreign', name.endsWith('.bag') ? 'ros1' : 'mcap', name), path);
        const fix = await runCli(['fix', path]);
        assert.equal(fix.code, 0, fix.stderr);
        assert.equal(fix.stdout, `${path}: ok, nothing to fix\n`);
        assert.deepEqual(readdirSync(dir), [name]);
      }
    },
  );

  test('a directory that is not a bag folder is still refused', SLOW, async () => {
    const { code, stderr } = await runCli(['info', tmp.path('')]);
    assert.notEqual(code, 0);
    assert.match(stderr, /is a directory, not a bag file/);
  });

  test('--try-to-fix reads an unclosed ROS 1 bag, says what it read around, and clone salvages it', SLOW, async () => {
    // plain.bag cut at 70 %: no index (as when `rosbag record` is killed) and a record cut by the end of the file.
    const whole = readFileSync(fixturePath('foreign', 'ros1', 'plain.bag'));
    const cut = tmp.path('unclosed.bag');
    writeFileSync(cut, whole.subarray(0, Math.floor((whole.length * 7) / 10)));
    const refused = await runCli(['info', cut]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /the bag has no index .*open with tryToFix/);
    const info = await runCli(['info', '--try-to-fix', cut]);
    assert.equal(info.code, 0, info.stderr);
    const count = Number(/^Message Count: +(\d+)$/m.exec(info.stdout)?.[1]);
    assert.ok(count > 0 && count < 91, info.stdout);
    assert.match(info.stdout, /^Problems: +the bag has no index/m);
    assert.match(info.stdout, /^ +bad record: .*the last \d+ bytes of the file are not read$/m);
    const cat = await runCli(['cat', '--try-to-fix', cut]);
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout.trimEnd().split('\n').length, count);
    const fix = await runCli(['fix', '--yes', cut]);
    assert.notEqual(fix.code, 0);
    assert.match(fix.stderr, /cannot repair files; copy what can be read instead .*clone --try-to-fix/);
    assert.equal(readFileSync(cut).length, Math.floor((whole.length * 7) / 10), 'fix left the file as it was');
    const out = tmp.path('salvaged.vcap');
    const clone = await runCli(['clone', '-q', '--try-to-fix', cut, out]);
    assert.equal(clone.code, 0, clone.stderr);
    const reader = await BagReader.create(out);
    try {
      assert.equal(reader.getInfo().messageCount, count);
    } finally {
      reader.close();
    }
  });

  test('--try-to-fix reads a rosbag2 folder left without metadata.yaml by a recording that crashed', SLOW, async () => {
    const crashed = tmp.path('crashed');
    mkdirSync(crashed);
    copyFileSync(join(folder, 'sqlite3.db3'), join(crashed, 'crashed_0.db3'));
    const refused = await runCli(['info', crashed]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /has no metadata\.yaml .* holds 1 storage files; open with tryToFix to read them/);
    const info = await runCli(['info', '--try-to-fix', crashed]);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /^Message Count: +91$/m);
    assert.match(
      info.stdout,
      /^Problems: +no metadata\.yaml: read the 1 storage files in their numeric order \(crashed_0\.db3\)$/m,
    );
    const cat = await runCli(['cat', '--try-to-fix', crashed]);
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout.trimEnd().split('\n').length, 91);
  });
});
