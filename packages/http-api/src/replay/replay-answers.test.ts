import assert from 'node:assert/strict';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { join } from 'node:path';
import { BagReader } from '@vlink/bag';
import { buildFixtureRoot, type FixtureRoot } from '../testing/fixtures.js';
import { ReplaySession, SEND_BUFFER_HIGH, type ReplayOutput, type StatusEvent } from './replay-session.js';

// Control ids at the session level, where the test holds the transport's queued bytes: an answer waits for what the
// control changed even when the client is backed up.

let fx: FixtureRoot;
before(async () => {
  fx = await buildFixtureRoot();
});
after(() => fx?.cleanup());

type Sent = { frame: number } | { status: StatusEvent } | { finished: boolean };

/** An output that logs frames and events in the order they go out; backed up once `backedUpAfter` frames are out. */
function loggingOutput() {
  const state = { backedUpAfter: Infinity, log: [] as Sent[] };
  const frames = () => state.log.filter((s) => 'frame' in s).length;
  const out: ReplayOutput = {
    buffered: () => (frames() >= state.backedUpAfter ? SEND_BUFFER_HIGH + 1 : 0),
    frame: (f) => void state.log.push({ frame: f.timestamp }),
    status: (e) => void state.log.push({ status: e }),
    finished: (interrupted) => void state.log.push({ finished: interrupted }),
    error: (e) => assert.fail(e.message),
  };
  return { state, out };
}

const session = (out: ReplayOutput) =>
  new ReplaySession(
    {
      lease: async () => {
        const reader = await BagReader.create(join(fx.root, 'drive.vdb'));
        return { reader, release: () => reader.close() };
      },
      durationMs: async () => 1200,
    },
    out,
  );

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 3000; !check(); ) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
const answered = (log: Sent[], id: string) => log.findIndex((s) => 'status' in s && s.status.id === id);

describe('ReplaySession control ids', () => {
  test('rate 0, backed up: pause is answered after the frame that was waiting for the socket, and nothing follows', async () => {
    const { state, out } = loggingOutput();
    const replay = session(out);
    state.backedUpAfter = 3;
    await replay.play({ rate: 0, beginMs: 0, times: 1, paused: false });
    await new Promise((r) => setTimeout(r, 20)); // the fourth frame now waits for the socket to drain
    await replay.pause('p');
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(answered(state.log, 'p'), -1, 'not answered while a frame still waits to go out');
    state.backedUpAfter = Infinity;
    await until(() => answered(state.log, 'p') >= 0, 'the answer');
    await new Promise((r) => setTimeout(r, 30));
    const at = answered(state.log, 'p');
    const answer = (state.log[at] as { status: StatusEvent }).status;
    const lastFrame = state.log.slice(0, at).findLast((s) => 'frame' in s) as { frame: number };
    assert.equal(state.log.slice(0, at).filter((s) => 'frame' in s).length, 4, 'the frame that waited went out first');
    assert.deepEqual(
      [answer.status, answer.time],
      ['paused', lastFrame.frame / 1000],
      'reports the frame that went out last',
    );
    assert.deepEqual(state.log.slice(at + 1), [], 'no frame and no event after the answer');
    replay.close();
  });

  test('rate 0, backed up: a step is answered after its frame is sent', async () => {
    const { state, out } = loggingOutput();
    const replay = session(out);
    state.backedUpAfter = 0;
    await replay.play({ rate: 0, beginMs: 0, times: 1, paused: true });
    await replay.step('s');
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(answered(state.log, 's'), -1);
    state.backedUpAfter = Infinity;
    await until(() => answered(state.log, 's') >= 0, 'the answer');
    const at = answered(state.log, 's');
    assert.equal(
      state.log.slice(0, at).filter((s) => 'frame' in s).length,
      1,
      'the one stepped frame, before the answer',
    );
    replay.close();
  });

  test('a closed session answers nothing', async () => {
    const { state, out } = loggingOutput();
    const replay = session(out);
    await replay.play({ rate: 1, beginMs: 0, times: 1, paused: true }, 'p');
    await until(() => answered(state.log, 'p') >= 0, 'the play answer');
    replay.close();
    await replay.resume('r');
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(answered(state.log, 'r'), -1);
  });
});
