import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { actionText } from '@vlink/bag';
import { decodeFrames } from '@vlink/bag-decode';
import {
  CLI,
  cliArgs,
  cliEnv,
  fixtureFrames,
  hasScript,
  PtySession,
  ndjson,
  pointDescriptor,
  runCli,
  START_MS,
  tempDir,
  writeBag,
  SLOW,
} from './testing/harness.js';

const tmp = tempDir();
const vdb = tmp.path('drive.vdb');
const frames = fixtureFrames();

before(() => writeBag(vdb));
after(() => tmp.cleanup());

describe('vlink-bag cat', () => {
  test('NDJSON: one object per frame in the documented shape and key order', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['cat', vdb]);
    assert.equal(code, 0, stderr);
    const lines = ndjson(stdout);
    assert.equal(lines.length, frames.length);
    lines.forEach((line, i) => {
      const frame = frames[i]!;
      assert.deepEqual(Object.keys(line), [
        'timestamp',
        'publishTime',
        'url',
        'action',
        'serType',
        'schemaType',
        'size',
        'data',
      ]);
      assert.deepEqual(line, {
        timestamp: frame.timestamp,
        publishTime: frame.publishTime ?? frame.timestamp,
        url: frame.url,
        action: actionText(frame.actionType),
        serType: frame.serType,
        schemaType: frame.schemaType,
        size: frame.data.byteLength,
        data: Buffer.from(frame.data).toString('base64'),
      });
    });
  });

  test('--meta starts with the recording start, tag and the embedded schemas', SLOW, async () => {
    const { stdout } = await runCli(['cat', vdb, '--meta', '-u', '/imu']);
    const [meta, schema, first] = ndjson(stdout);
    assert.deepEqual(meta, {
      meta: {
        startTimestamp: START_MS,
        tagName: 'fixture',
        format: 'vdb',
        losses: { '/camera': 0, '/config': 0, '/imu': 0, '/lidar': 0, '/log': 0, '/rpc': 0 },
      },
    });
    assert.deepEqual(schema, {
      schema: {
        name: 'test.Point',
        encoding: 'protobuf',
        schemaType: 3,
        data: Buffer.from(pointDescriptor().fds).toString('base64'),
      },
    });
    assert.equal(first!['url'], '/imu');
  });

  test('filters: -u whitelist, -k blacklist, -b/-e window in seconds (inclusive)', SLOW, async () => {
    const [only, skip, window] = await Promise.all([
      runCli(['cat', vdb, '-u', '/imu,/log']),
      runCli(['cat', vdb, '-k', '/lidar', '-k', '/rpc']),
      runCli(['cat', vdb, '-b', '0.5', '-e', '1.0', '-u', '/camera']),
    ]);
    const urls = (out: string) => new Set(ndjson(out).map((line) => line['url']));
    assert.deepEqual(urls(only.stdout), new Set(['/imu', '/log']));
    assert.equal(ndjson(only.stdout).length, frames.filter((f) => f.url === '/imu' || f.url === '/log').length);
    assert.deepEqual(urls(skip.stdout), new Set(['/camera', '/imu', '/log', '/config']));
    const times = ndjson(window.stdout).map((line) => line['timestamp'] as number);
    assert.deepEqual(
      times,
      frames
        .filter((f) => f.url === '/camera' && f.timestamp >= 500_000 && f.timestamp <= 1_000_000)
        .map((f) => f.timestamp),
    );
    const none = await runCli(['cat', vdb, '-u', '/nope']);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /warning: no url \/nope in this bag/);
  });

  test('--decode: protobuf through the embedded descriptor, JSON as JSON, text as text', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['cat', vdb, '--decode', '-e', '0.1']);
    assert.equal(code, 0, stderr);
    const byUrl = new Map<unknown, Record<string, unknown>>();
    for (const line of ndjson(stdout)) if (!byUrl.has(line['url'])) byUrl.set(line['url'], line);
    assert.deepEqual(byUrl.get('/camera')!['decoded'], { x: 0.5, y: 0, label: 'p0' });
    assert.deepEqual(byUrl.get('/imu')!['decoded'], { i: 1, ok: true });
    assert.equal(byUrl.get('/log')!['decoded'], 'line 2, "quoted"');
    assert.equal(byUrl.get('/rpc')!['decoded'], null, 'no descriptor for test.Req');
    assert.match(String(byUrl.get('/rpc')!['decodeError']), /test\.Req/, 'and why, as the server says it');
    assert.equal(byUrl.get('/camera')!['decodeError'], undefined);
    assert.ok(typeof byUrl.get('/camera')!['data'] === 'string', 'data stays for record --stdin');
    const named = await runCli(['cat', vdb, '--json-names', '-u', '/camera', '-e', '0.03']);
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(ndjson(named.stdout)[0]!['decoded'], { x: 0.5, y: 0, labelText: 'p0' }, 'implies --decode');
  });

  test('--format csv and text', SLOW, async () => {
    const csv = await runCli(['cat', vdb, '--format', 'csv', '--decode', '-u', '/log,/rpc', '-e', '0.07']);
    assert.equal(csv.code, 0, csv.stderr);
    assert.deepEqual(csv.stdout.trimEnd().split('\n'), [
      'timestamp,publishTime,url,action,serType,schemaType,size,data,decoded',
      `40000,40000,/log,Pub,text,1,16,${Buffer.from('line 2, "quoted"').toString('base64')},"""line 2, \\""quoted\\"""""`,
      `60000,60000,/rpc,C/Req,test.Req|test.Resp,3,3,${Buffer.from([4, 1, 2]).toString('base64')},`,
    ]);
    const text = await runCli(['cat', vdb, '--format', 'text', '--decode', '-u', '/camera,/lidar', '-e', '0.06']);
    assert.deepEqual(text.stdout.trimEnd().split('\n'), [
      '0.020000s  /camera  Pub  22B  test.Point  {"x":0.5,"y":0,"label":"p0"}',
      '0.050000s  /lidar  Sub  256.00KB  raw  03 22 41 60 7f 9e bd dc fb 1a 39 58 77 96 b5 d4 f3 12 31 50 6f 8e ad cc …',
    ]);
    // A payload that looked decodable and was not says why; a Raw one (/lidar above) was never expected to.
    const rpc = await runCli(['cat', vdb, '--format', 'text', '--decode', '-u', '/rpc', '-e', '0.07']);
    assert.match(
      rpc.stdout,
      /^0\.060000s {2}\/rpc {2}C\/Req {2}3B {2}test\.Req\|test\.Resp {2}04 01 02 {2}\(not decoded: .*test\.Req.*\)$/m,
    );
  });

  test("--format binary: the server's binary frame layout, every frame byte for byte", SLOW, async () => {
    const { code, stdoutBytes, stderr } = await runCli(['cat', vdb, '--format', 'binary']);
    assert.equal(code, 0, stderr);
    const back = decodeFrames(new Uint8Array(stdoutBytes.buffer, stdoutBytes.byteOffset, stdoutBytes.byteLength));
    assert.equal(back.length, frames.length);
    back.forEach((frame, i) => {
      const want = frames[i]!;
      assert.equal(frame.timestamp, want.timestamp);
      // The layout carries a publish time only where it differs from the log time.
      assert.equal(frame.publishTime ?? frame.timestamp, want.publishTime ?? want.timestamp);
      assert.equal(frame.url, want.url);
      assert.equal(frame.serType, want.serType);
      assert.equal(frame.actionType, want.actionType);
      assert.equal(frame.schemaType, want.schemaType);
      assert.deepEqual(frame.data, want.data);
    });
    // The filters apply as to the other formats.
    const lidar = await runCli(['cat', vdb, '--format', 'binary', '-u', '/lidar']);
    const only = decodeFrames(new Uint8Array(lidar.stdoutBytes));
    assert.deepEqual(
      only.map((f) => f.timestamp),
      frames.filter((f) => f.url === '/lidar').map((f) => f.timestamp),
    );
  });

  test('--format binary refuses --decode and a terminal, before reading the bag', SLOW, async () => {
    const decode = await runCli(['cat', vdb, '--format', 'binary', '--decode']);
    assert.equal(decode.code, 2);
    assert.match(decode.stderr, /--decode is not available with --format binary/);
    assert.equal(decode.stdout, '');
    if (!hasScript()) return;
    const pty = new PtySession(['cat', vdb, '--format', 'binary']);
    await pty.waitFor(/redirect stdout to a file or a pipe/);
    assert.equal(await pty.exit(), 2);
  });

  test('a closed stdout (`| head`) ends the process quietly', SLOW, async () => {
    const child = spawn(CLI[0], cliArgs(['cat', vdb]), { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
  });
});
