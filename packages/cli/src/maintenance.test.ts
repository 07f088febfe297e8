import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, test } from '@vlink/fixtures/test';
import { CLI, cliEnv, runCli, SLOW } from './testing/harness.js';
import { sampleBags } from './testing/sample-bags.js';

const { tmp, vdb, vcap } = sampleBags();
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('check, reindex, fix, tag', () => {
  test('check: exit 0 and "ok" for good bags, 1 with a reason for damaged ones', SLOW, async () => {
    const truncatedVcap = tmp.path('cut.vcap');
    writeFileSync(truncatedVcap, readFileSync(vcap).subarray(0, 20_000));
    const garbage = tmp.path('garbage.vdb');
    writeFileSync(garbage, Buffer.alloc(8192, 7));
    const [good, goodVcap, quiet, cut, junk] = await Promise.all([
      runCli(['check', vdb]),
      runCli(['check', vcap]),
      runCli(['check', '-q', vdb]),
      runCli(['check', truncatedVcap]),
      runCli(['check', garbage]),
    ]);
    assert.deepEqual([good.code, good.stdout, good.stderr], [0, `${vdb}: ok (200 frames checked)\n`, '']);
    assert.deepEqual([goodVcap.code, goodVcap.stdout], [0, `${vcap}: ok (200 frames checked)\n`]);
    assert.deepEqual([quiet.code, quiet.stdout], [0, '']);
    assert.equal(cut.code, 1);
    assert.match(
      cut.stderr,
      /^vlink-bag check: .*cut\.vcap: check failed: \d+ problems? \(.+\); vlink-bag fix may repair it\n$/,
    );
    // Each problem on stdout, with where it is.
    assert.match(cut.stdout, /cut\.vcap: offset \d+: /);
    assert.equal(junk.code, 1);
    assert.match(junk.stderr, /^vlink-bag check: .*garbage\.vdb: /);
  });

  test('a recording killed mid-way fails check; fix repairs it', SLOW, async () => {
    const crashed = tmp.path('crashed.vdb');
    // What a power cut leaves: a sync-mode recording with frequent commits that dies before it closes the file.
    const script = fileURLToPath(new URL('./testing/crashed-recording.js', import.meta.url));
    const child = spawn(CLI[0], [...CLI[1].slice(0, -1), script, crashed], { env: cliEnv(), stdio: 'ignore' });
    const signal = await new Promise((resolve) => child.on('close', (_code, sig) => resolve(sig)));
    assert.equal(signal, 'SIGKILL', 'the recorder died before closing the bag');
    const before = await runCli(['check', crashed]);
    assert.equal(before.code, 1);
    assert.match(
      before.stderr,
      new RegExp(`^vlink-bag check: ${crashed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .+\n$`),
    );
    const fixed = await runCli(['fix', crashed, '--yes']);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(
      fixed.stdout,
      new RegExp(
        `^${esc(crashed)}: fixed: \\d+ frames \\(.+\\) recovered, nothing lost; original kept as ${esc(crashed)}\\.bak\n$`,
      ),
    );
    assert.ok(existsSync(`${crashed}.bak`), 'the original is kept');
    const after = await runCli(['check', crashed]);
    assert.equal(after.code, 0, after.stderr);
    const info = await runCli(['info', crashed, '--json']);
    const parsed = JSON.parse(info.stdout) as { hasCompleted: boolean; messageCount: number };
    assert.equal(parsed.hasCompleted, true);
    assert.ok(parsed.messageCount > 0);
    const again = await runCli(['fix', crashed]);
    assert.deepEqual([again.code, again.stdout], [0, `${crashed}: ok, nothing to fix\n`]);
    const rebuilt = await runCli(['fix', crashed, '--rebuild']);
    assert.equal(rebuilt.code, 0, 'no terminal: no question asked');
    assert.match(rebuilt.stdout, new RegExp(`original kept as ${esc(crashed)}\\.bak\\.1\n$`), 'a second backup');
  });

  test('reindex and fix work on .vdb and .vcap; a single .vcap has no tag', SLOW, async () => {
    const [copyVdb, copyVcap] = [tmp.path('reindex.vdb'), tmp.path('reindex.vcap')];
    copyFileSync(vdb, copyVdb);
    copyFileSync(vcap, copyVcap);
    const [a, b] = await Promise.all([runCli(['reindex', copyVdb]), runCli(['reindex', copyVcap])]);
    assert.deepEqual([a.code, a.stdout], [0, `${copyVdb}: reindexed\n`], a.stderr);
    assert.deepEqual([b.code, b.stdout], [0, `${copyVcap}: reindexed\n`], b.stderr);
    const [fixVcap, tagVcap] = await Promise.all([
      runCli(['fix', '--yes', '--rebuild', '--no-backup', copyVcap]),
      runCli(['tag', vcap, 'x']),
    ]);
    assert.equal(fixVcap.code, 0, fixVcap.stderr);
    assert.match(fixVcap.stdout, /recovered, nothing lost; original replaced\n$/);
    assert.ok(!existsSync(`${copyVcap}.bak`));
    assert.deepEqual(
      [tagVcap.code, tagVcap.stderr],
      [1, `vlink-bag tag: ${vcap}: tagging is not supported for .vcap files (a single .vcap has no rewritable tag)\n`],
    );
    const [check, cat] = await Promise.all([runCli(['check', copyVcap]), runCli(['cat', copyVcap])]);
    assert.equal(check.code, 0, check.stderr);
    assert.equal(cat.stdout, (await runCli(['cat', vcap])).stdout, 'frames unchanged');
  });

  test('tag: rewrites the header tag', SLOW, async () => {
    const copy = tmp.path('tag.vdb');
    copyFileSync(vdb, copy);
    const r = await runCli(['tag', copy, 'highway 2026-03-17']);
    assert.deepEqual([r.code, r.stdout], [0, `${copy}: tag set to "highway 2026-03-17"\n`]);
    const info = await runCli(['info', copy, '--json']);
    assert.equal((JSON.parse(info.stdout) as { tagName: string }).tagName, 'highway 2026-03-17');
    const missing = await runCli(['tag', tmp.path('missing.vdb'), 'x']);
    assert.deepEqual([missing.code, missing.stderr], [1, `vlink-bag tag: ${tmp.path('missing.vdb')}: no such file\n`]);
  });
});
