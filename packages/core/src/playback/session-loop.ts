import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { PassClock } from './pass-clock.js';
import type { ResolvedPlayConfig } from './play-config.js';
import { PlayStatus } from './play-status.js';
import type { PlaybackSource } from './playback-source.js';
import type { PlayerState } from './player-state.js';
import { interrupted, type PassEnd, type Session } from './session.js';

/** How long the loop may emit back to back (late frames, `forceDelay: 0`) before yielding to the event loop. */
const SLICE_MS = 8;

const now = () => performance.now();

/**
 * Runs one session (format reference §7.4 steps 1–4): reset the plugin, apply `autoPause`, play the passes, flush the plugin
 * after each natural end, finish. Resolves `'jump'` when a jump ended it (no finish fired), else `'finished'`.
 */
export async function runSession(
  state: PlayerState,
  source: PlaybackSource,
  s: Session,
  configBegin: (config: ResolvedPlayConfig) => number,
): Promise<'jump' | 'finished'> {
  let wasInterrupted = false;
  let error: BagError | undefined;
  try {
    if (s.clearFlags) {
      state.paused = false;
      state.step = false;
    }
    source.readPlugin()?.onReset();
    if (s.autoPause) state.pause();
    let beginMs = s.beginMs;
    for (let pass = 0; ; ) {
      const end = await runPass(state, source, s, beginMs);
      if (end === 'jump') return 'jump';
      if (end === 'interrupted') {
        wasInterrupted = true;
        break;
      }
      if (end === 'empty') break;
      beginMs = configBegin(s.config);
      if (!interrupted(s)) {
        source.readPlugin()?.flush();
        await state.settleDeliveries();
      }
      if (s.times > 0 && ++pass >= s.times) break;
      await yieldToEventLoop();
    }
  } catch (caught) {
    error = BagError.wrap(caught, 'IO_ERROR', 'playback failed');
    wasInterrupted = true;
    state.report(error);
  }
  // `seeking` (a jump in progress) needs no reset here: a stopped player reports position 0 whatever it says, and the
  // next pass clears it as soon as it opens, before its status leaves Stopped.
  state.clock = undefined;
  state.finish(wasInterrupted);
  s.chain.settle(wasInterrupted, error);
  return 'finished';
}

/** One pass (format reference §7.3, and §7.4 steps 1–6): ready, no-data check, timing reset, then pace and emit every frame. */
async function runPass(state: PlayerState, source: PlaybackSource, s: Session, beginMs: number): Promise<PassEnd> {
  const beginUs = Math.round(beginMs * 1000);
  const iterator = source.open({
    beginUs,
    endUs: Math.round(s.config.endTime * 1000),
    filterUrls: s.config.filterUrls,
    timeBase: s.config.timeBase,
  });
  const byPublish = s.config.timeBase === 'publish';
  try {
    const first = iterator.next();
    state.seeking = false;
    state.onReady?.();
    if (first.done) {
      state.setStatus(PlayStatus.Stopped);
      return 'empty';
    }
    const clock = (state.clock = new PassClock(beginUs, s.rate));
    if (state.paused) clock.freeze();
    state.markEmitted(beginUs);
    if (s.stop || s.quit) return 'interrupted';
    if (s.jump) return 'jump';
    state.setStatus(state.paused ? PlayStatus.Paused : PlayStatus.Playing);
    let sliceStart = now();
    let count = 0;
    for (let step: IteratorResult<Frame> = first; !step.done; step = iterator.next()) {
      const frame = step.value;
      // The time this frame is paced by; a publish time earlier than the last one is simply already due.
      const at = byPublish ? (frame.publishTime ?? frame.timestamp) : frame.timestamp;
      if (!dueNow(state, s, at, clock)) {
        const end = await waitFor(state, s, at, clock);
        if (end !== undefined) return end;
      }
      if (state.step) {
        state.step = false;
        clock.advanceTo(clock.dueMs(at));
      }
      state.setStatus(PlayStatus.Playing);
      state.markEmitted(at);
      const plugin = source.readPlugin();
      if (plugin) plugin.onRead(frame);
      else state.deliver(frame);
      if (state.hasDeliveries) {
        await state.settleDeliveries();
        sliceStart = now();
      } else if ((++count & 31) === 0 && now() - sliceStart > SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = now();
      }
      if (interrupted(s)) return s.jump ? 'jump' : 'interrupted';
    }
    state.setStatus(PlayStatus.Stopped);
    return 'end';
  } finally {
    try {
      iterator.return?.();
    } catch {
      // The reader may already be closed (quit during close); the cursor is gone either way.
    }
  }
}

/** The fast path: a frame that may go out now without awaiting anything (an await per frame costs throughput). */
function dueNow(state: PlayerState, s: Session, timestampUs: number, clock: PassClock): boolean {
  if (state.paused || interrupted(s)) return false;
  const forceDelay = s.config.forceDelay;
  return forceDelay === 0 || (forceDelay < 0 && now() >= clock.deadline(timestampUs));
}

/**
 * Waits until a frame may be emitted: its wait (format reference §7.3 step 5), then a pause (step 6). Returns how the pass ends
 * when it was interrupted, undefined when the frame may go out (due, or stepped).
 */
async function waitFor(
  state: PlayerState,
  s: Session,
  timestampUs: number,
  clock: PassClock,
): Promise<PassEnd | undefined> {
  const forceDelay = s.config.forceDelay;
  // With a fixed delay (forceDelay > 0) or none (0) the clock paces nothing: once the delay is over, only a pause holds
  // the frame.
  const pacedByClock = forceDelay < 0;
  if (forceDelay > 0) {
    // A fixed delay is not interrupted by pause, only by stop, step, jump and quit.
    const deadline = now() + forceDelay;
    while (!interrupted(s) && !state.step && now() < deadline) await state.alarm.sleepUntil(deadline);
  }
  for (;;) {
    if (interrupted(s)) return s.jump ? 'jump' : 'interrupted';
    if (state.step && state.paused) return undefined;
    if (pacedByClock && !state.paused) {
      const deadline = clock.deadline(timestampUs);
      if (now() < deadline) {
        await state.alarm.sleepUntil(deadline);
        continue;
      }
      return undefined;
    }
    if (!state.paused) return undefined;
    state.setStatus(PlayStatus.Paused);
    await state.alarm.block();
  }
}
