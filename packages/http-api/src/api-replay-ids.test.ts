import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { decodeFrameAt } from '@vlink/bag-decode';
import { replayServer } from './testing/replay-server.js';
import type { QueuedSocket, Received } from './testing/ws-client.js';

// Control ids on the replay WebSocket: a command's `id` comes back on the one status event that shows the command in
// effect (or on its error event), and everything the command changed is visible before that answer.

const replay = replayServer();
const connect = async () => (await replay.open()).ws;
const json = (m: Received) => (m.kind === 'text' ? m.json : undefined);
const timestamps = (ms: Received[]) =>
  ms.flatMap((m) => (m.kind === 'binary' ? [decodeFrameAt(m.bytes)!.frame.timestamp] : []));
const events = (ms: Received[]) => ms.flatMap((m) => (m.kind === 'text' ? [m.json] : []));
/** The event carrying `id`, and everything received before it. */
async function answer(
  ws: QueuedSocket,
  id: unknown,
  timeoutMs = 5000,
): Promise<{ event: Record<string, unknown>; before: Received[] }> {
  const received = await ws.until((m) => json(m)?.['id'] === id, timeoutMs);
  return { event: json(received.pop()!)!, before: received };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WS replay control ids', () => {
  test('a seek is answered by the status at the new position; no frame of the old position follows it', async () => {
    const ws = await connect();
    ws.send({ op: 'play', rate: 1, id: 'p' });
    const started = await answer(ws, 'p');
    assert.deepEqual(started.event, { event: 'status', status: 'playing', time: 0, rate: 1, dropped: 0, id: 'p' });
    assert.deepEqual(timestamps(started.before), [], 'the answer to play comes before the first frame');
    await sleep(80);
    ws.send({ op: 'seek', time: 900, id: 'jump' });
    const moved = await answer(ws, 'jump');
    assert.deepEqual(moved.event, { event: 'status', status: 'playing', time: 900, rate: 1, dropped: 0, id: 'jump' });
    assert.ok(
      timestamps(moved.before).every((t) => t < 900_000),
      'frames before the answer are from the old position',
    );
    await ws.event('finished');
    const rest = timestamps(ws.received);
    assert.deepEqual(
      rest,
      replay.frames.filter((f) => f.timestamp >= 900_000).map((f) => f.timestamp),
      'after the answer: the new position, in full',
    );
  });

  test('play, step, resume, pause, rate and stop are each answered once the control took effect', async () => {
    const ws = await connect();
    ws.send({ op: 'play', rate: 1, paused: true, id: 1 });
    assert.deepEqual((await answer(ws, 1)).event, {
      event: 'status',
      status: 'paused',
      time: 0,
      rate: 1,
      dropped: 0,
      id: 1,
    });

    ws.send({ op: 'step', id: 2 });
    const stepped = await answer(ws, 2);
    assert.deepEqual(
      timestamps(stepped.before),
      [replay.frames[0]!.timestamp],
      'the stepped frame comes before the answer',
    );
    assert.deepEqual(stepped.event, {
      event: 'status',
      status: 'paused',
      time: replay.frames[0]!.timestamp / 1000,
      rate: 1,
      dropped: 0,
      id: 2,
    });

    ws.send({ op: 'resume', id: 3 });
    assert.equal((await answer(ws, 3)).event['status'], 'playing');
    await sleep(100);
    ws.send({ op: 'pause', id: 'hold' });
    const held = await answer(ws, 'hold');
    const played = timestamps(held.before);
    assert.ok(played.length > 0, 'resumed');
    assert.deepEqual(
      played,
      replay.frames.slice(1, 1 + played.length).map((f) => f.timestamp),
      'in order, none skipped',
    );
    assert.deepEqual(
      [held.event['status'], held.event['time']],
      ['paused', played.at(-1)! / 1000],
      'paused after the last frame sent',
    );
    await sleep(150);
    assert.deepEqual(timestamps(ws.received), [], 'no frame follows the answer to pause');

    ws.send({ op: 'rate', rate: 0, id: 4.5 });
    const rated = (await answer(ws, 4.5)).event;
    assert.deepEqual([rated['status'], rated['rate'], rated['time']], ['paused', 0, played.at(-1)! / 1000]);
    ws.send({ op: 'stop', id: 'end' });
    const stopped = await answer(ws, 'end');
    assert.deepEqual(stopped.event, {
      event: 'status',
      status: 'stopped',
      time: played.at(-1)! / 1000,
      rate: 0,
      dropped: 0,
      id: 'end',
    });
    assert.deepEqual(
      await ws.next(),
      { kind: 'text', json: { event: 'finished', interrupted: true, dropped: 0 } },
      'finished follows the answer',
    );

    // With nothing running, a control is answered at once.
    ws.send({ op: 'pause', id: 'idle' });
    assert.equal((await answer(ws, 'idle')).event['status'], 'stopped');
  });

  test('an empty window is answered just before its finished; a seek before any play once the paused pass is open', async () => {
    const ws = await connect();
    ws.send({ op: 'play', begin: 50_000, id: 'none' });
    const ended = await answer(ws, 'none');
    assert.deepEqual(events(ended.before), []);
    assert.deepEqual(ended.event, {
      event: 'status',
      status: 'stopped',
      time: 50_000,
      rate: 1,
      dropped: 0,
      id: 'none',
    });
    assert.deepEqual(await ws.next(), { kind: 'text', json: { event: 'finished', interrupted: false, dropped: 0 } });

    const fresh = await connect();
    fresh.send({ op: 'seek', time: 505, id: 's' });
    assert.deepEqual((await answer(fresh, 's')).event, {
      event: 'status',
      status: 'paused',
      time: 505,
      rate: 1,
      dropped: 0,
      id: 's',
    });
    fresh.send({ op: 'step', id: 't' });
    assert.deepEqual(timestamps((await answer(fresh, 't')).before), [
      replay.frames.find((f) => f.timestamp >= 505_000)!.timestamp,
    ]);
  });

  test('commands sent back to back are answered in order, once each; commands without an id get no id', async () => {
    const ws = await connect();
    ws.send({ op: 'play', rate: 1, paused: true, id: 'a' });
    ws.send({ op: 'step', id: 'b' });
    ws.send({ op: 'pause' });
    ws.send({ op: 'seek', time: 300, id: 'c' });
    ws.send({ op: 'rate', rate: 2, id: 'd' });
    ws.send({ op: 'resume' });
    ws.send({ op: 'stop', id: 'e' });
    const { before } = await answer(ws, 'e');
    await sleep(100);
    const all = events([...before, ...ws.received]);
    assert.deepEqual(
      all.flatMap((e) => ('id' in e ? [e['id']] : [])),
      ['a', 'b', 'c', 'd'],
    );
    assert.equal(
      all.some((e) => e['event'] === 'error'),
      false,
    );
  });

  test('a malformed command is answered in its turn, after the answers owed to the commands before it', async () => {
    // Its error went out at once, ahead of their answers (found by a fuzz of random control sequences).
    const ws = await connect();
    ws.send({ op: 'play', rate: 1, paused: true, id: 1 });
    ws.send({ op: 'step', id: 2 });
    ws.send({ op: 'rate', rate: -1, id: 3 });
    ws.send('not json');
    ws.send({ op: 'seek', time: 300, id: 4 });
    ws.send({ op: 'play', begin: 500, end: 100, id: 5 });
    ws.send({ op: 'stop', id: 6 });
    const { before } = await answer(ws, 6);
    const answered = events(before).flatMap((e) => ('id' in e ? [[e['id'], e['event']]] : []));
    assert.deepEqual(answered, [
      [1, 'status'],
      [2, 'status'],
      [3, 'error'],
      [4, 'status'],
      [5, 'error'],
    ]);
    // The id-less error of the text that is no JSON comes between 3's and 4's.
    const order = events(before).flatMap((e) => (e['event'] === 'error' ? [e['id'] ?? 'no id'] : []));
    assert.deepEqual(order, [3, 'no id', 5]);
  });

  test('a bad id is refused like any bad command; a refused command echoes its id on the error event', async () => {
    const ws = await connect();
    const refused = async (command: unknown) => {
      ws.send(command);
      return ws.event('error');
    };
    for (const id of [{}, [1], true, null, 'x'.repeat(65)]) {
      const error = await refused({ op: 'pause', id });
      assert.equal(error['code'], 'INVALID_ARGUMENT');
      assert.match(
        String(error['message']),
        /^bad command: "id": (must be a string of at most 64 characters or a number|Too big: .*64 characters)$/,
      );
      assert.equal('id' in error, false, 'an invalid id is not echoed');
    }
    const badSeek = await refused({ op: 'seek', time: -1, id: 'bad-seek' });
    assert.deepEqual([badSeek['code'], badSeek['id']], ['INVALID_ARGUMENT', 'bad-seek']);
    assert.match(String(badSeek['message']), /"time"/);
    const notPaused = await refused({ op: 'step', id: 9 });
    assert.deepEqual([notPaused['code'], notPaused['id']], ['INVALID_ARGUMENT', 9]);
    assert.equal((await refused({ op: 'fly', id: 'f' }))['id'], 'f');

    // The longest string id and any number are accepted and echoed as sent.
    const long = 'y'.repeat(64);
    ws.send({ op: 'pause', id: long });
    assert.equal((await answer(ws, long)).event['status'], 'stopped');
    ws.send({ op: 'resume', id: -0.25 });
    await answer(ws, -0.25);
    await sleep(50);
    assert.equal(
      ws.received.some((m) => json(m)?.['id'] === 9),
      false,
      'a refused command gets no status answer',
    );
    assert.equal(ws.closed, false);
  });
});
