import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, test } from '@vlink/fixtures/test';
import { serve } from './index.js';
import { decodeFrameAt, FrameEncoder } from '@vlink/bag-decode';
import { replayServer } from './testing/replay-server.js';
import { writePublishTimeBag } from './testing/publish-time-bag.js';
import { QueuedSocket } from './testing/ws-client.js';

const replay = replayServer();
const connect = async (id = 'drive.vdb') => {
  const { ws, status } = await replay.open(id);
  assert.deepEqual(status, { event: 'status', status: 'stopped', time: 0, rate: 1, dropped: 0 });
  return ws;
};
const decode = (bytes: Uint8Array) => decodeFrameAt(bytes)!.frame;

describe('WS replay', () => {
  test('rate 0 sends every frame, byte-exact, then finished', async () => {
    const ws = await connect();
    ws.send({ op: 'play', rate: 0 });
    assert.equal((await ws.event('status')).status, 'playing');
    const finished = await ws.event('finished', () => true, 10_000);
    assert.deepEqual(finished, { event: 'finished', interrupted: false, dropped: 0 });
    const got = ws.binaries();
    const encoder = new FrameEncoder();
    assert.equal(got.length, replay.frames.length);
    got.forEach((bytes, i) => {
      assert.deepEqual(bytes, encoder.encode(replay.frames[i]!), `frame ${i}`);
    });
    assert.equal((await ws.event('status')).status, 'stopped');
  });

  test('paced replay keeps recording time (window and url filter)', async () => {
    const ws = await connect();
    const started = performance.now();
    ws.send({ op: 'play', rate: 2, begin: 100, end: 500, urls: ['dds://imu'] });
    await ws.event('finished', () => true, 5000);
    const elapsed = performance.now() - started;
    const got = ws.binaries().map(decode);
    const want = replay.frames.filter((f) => f.url === 'dds://imu' && f.timestamp >= 100_000 && f.timestamp <= 500_000);
    assert.deepEqual(
      got.map((f) => f.timestamp),
      want.map((f) => f.timestamp),
    );
    // The window's frames span (last − 100 ms) / rate 2 of wall time.
    const span = (want.at(-1)!.timestamp - 100_000) / 1000 / 2;
    assert.ok(elapsed >= span - 30, `took ${elapsed.toFixed(0)} ms, expected ≥ ${span} ms`);
    assert.ok(elapsed < span + 1000, `took ${elapsed.toFixed(0)} ms`);
  });

  test('pause, step, resume, seek, rate and stop, with status events', async () => {
    const ws = await connect();
    const status = (s: string) => ws.event('status', (e) => e.status === s);
    ws.send({ op: 'play', rate: 1, paused: true });
    await status('paused');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(ws.binaries().length, 0, 'nothing is sent while paused');

    ws.clearEvents();
    ws.send({ op: 'step' });
    assert.equal((await status('paused')).time, replay.frames[0]!.timestamp / 1000);
    ws.clearEvents();
    ws.send({ op: 'step' });
    assert.equal((await status('paused')).time, replay.frames[1]!.timestamp / 1000);
    assert.deepEqual(
      ws.binaries().map((b) => decode(b).timestamp),
      [replay.frames[0]!.timestamp, replay.frames[1]!.timestamp],
    );

    ws.clearEvents();
    ws.send({ op: 'resume' });
    await status('playing');
    await new Promise((r) => setTimeout(r, 120));
    ws.clearEvents();
    ws.send({ op: 'pause' });
    await status('paused');
    const played = ws.binaries().map((b) => decode(b).timestamp);
    assert.ok(played.length >= 1 && played.length <= 30, `played ${played.length}`);
    assert.deepEqual(
      played,
      replay.frames.slice(2, 2 + played.length).map((f) => f.timestamp),
      'in order, none skipped',
    );

    ws.clearEvents();
    ws.send({ op: 'seek', time: 800 });
    const seeked = await ws.event('status');
    assert.deepEqual([seeked.status, seeked.time], ['paused', 800]);
    ws.clearEvents();
    ws.send({ op: 'step' });
    await status('paused');
    const [afterSeek] = ws.binaries().map(decode);
    assert.equal(afterSeek!.timestamp, replay.frames.find((f) => f.timestamp >= 800_000)!.timestamp);

    ws.clearEvents();
    ws.send({ op: 'rate', rate: 4 });
    assert.equal((await ws.event('status', (e) => e.rate === 4)).status, 'paused');
    ws.clearEvents();
    ws.send({ op: 'resume' });
    await status('playing');
    ws.send({ op: 'stop' });
    await status('stopped');
    assert.deepEqual(await ws.event('finished'), { event: 'finished', interrupted: true, dropped: 0 });
    const tail = ws.binaries().map((b) => decode(b).timestamp);
    assert.ok(
      tail.every((t, i) => t > afterSeek!.timestamp && (i === 0 || t > tail[i - 1]!)),
      'the rate change re-sent nothing',
    );
  });

  test('timeBase publish: the window and the status time are publish times; frames keep log order', async () => {
    const dir = await writePublishTimeBag('pub.vdb');
    const own = await serve({ root: dir, port: 0 });
    const ws = await QueuedSocket.connect(`${own.url.replace('http', 'ws')}/v1/bags/pub.vdb/replay`);
    try {
      await ws.event('status');
      ws.send({ op: 'play', rate: 0, begin: 50, end: 100, timeBase: 'publish' });
      await ws.event('finished', () => true, 10_000);
      const got = ws.binaries().map(decode);
      assert.deepEqual(
        got.map((f) => [f.timestamp, f.publishTime ?? f.timestamp]),
        [
          [60_000, 60_000],
          [80_000, 80_000],
          [90_000, 65_000],
          [100_000, 100_000],
          [110_000, 85_000],
        ],
      );
      ws.clearEvents();
      ws.send({ op: 'play', rate: 1, paused: true, begin: 60, timeBase: 'publish' });
      await ws.event('status', (e) => e.status === 'paused');
      ws.clearEvents();
      ws.send({ op: 'step' });
      // The first frame published at or after 60 ms is logged at 60 ms; the next step's is logged at 80 ms.
      assert.equal((await ws.event('status', (e) => e.status === 'paused')).time, 60);
      ws.send({ op: 'stop' });
    } finally {
      await ws.close();
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('bad commands answer an error event and keep the connection', async () => {
    const ws = await connect();
    ws.send('{not json');
    assert.equal((await ws.event('error')).code, 'INVALID_ARGUMENT');
    ws.send({ op: 'fly' });
    assert.equal((await ws.event('error')).code, 'INVALID_ARGUMENT');
    ws.send({ op: 'play', rate: -1 });
    assert.match(String((await ws.event('error')).message), /rate/);
    ws.send({ op: 'step' });
    assert.match(String((await ws.event('error')).message), /paused/);
    ws.socket.send(new Uint8Array([1, 2, 3]));
    assert.equal((await ws.event('error')).code, 'INVALID_ARGUMENT');
    ws.send({ op: 'play', rate: 0, end: 50 });
    await ws.event('finished');
    assert.ok(ws.binaries().length > 0);
    assert.equal(ws.closed, false);
  });

  test('a step sent right after play {paused} is not refused', async () => {
    const ws = await connect();
    ws.send({ op: 'play', rate: 1, paused: true });
    ws.send({ op: 'step' });
    assert.equal(
      (await ws.event('status', (e) => e.status === 'paused' && e.time === replay.frames[0]!.timestamp / 1000)).dropped,
      0,
    );
    assert.deepEqual(
      ws.binaries().map((b) => decode(b).timestamp),
      [replay.frames[0]!.timestamp],
    );
    assert.equal(
      ws.received.some((m) => m.kind === 'text' && m.json['event'] === 'error'),
      false,
    );
  });

  test('each client has its own replay', async () => {
    const a = await connect();
    const b = await connect('runs/drive.vcap');
    a.send({ op: 'play', rate: 1, paused: true });
    b.send({ op: 'play', rate: 0 });
    await b.event('finished');
    assert.equal(b.binaries().length, replay.frames.length);
    assert.equal(a.binaries().length, 0);
    assert.equal((await a.event('status')).status, 'paused');
  });

  test('unknown bag is a 404 before the upgrade', async () => {
    await assert.rejects(QueuedSocket.connect(`${replay.server.url.replace('http', 'ws')}/v1/bags/nope.vdb/replay`));
  });
});
