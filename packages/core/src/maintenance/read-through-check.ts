import type { BackendReader } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Info } from '../model/info.js';
import { infoProblems } from '../model/info-problems.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { type CheckReport, ProblemList, type ProgressCallback } from './check-report.js';

/** Frames between two turns of the event loop (and progress reports): a large bag must not stall a server. */
const SLICE = 8192;

/**
 * The full check of a bag whose format has no check of its own (the read-only foreign formats: MCAP, ROS 1 and 2
 * bags, Apollo records, ULog): every frame read through the format's reader, which verifies what the format lets it
 * (record framing, chunk CRCs where the file has them, every compressed chunk and rosbag2 message decompressed), and
 * the frames read counted against the message count the file's summary gives. A reading error is the problem, at
 * the url and time of the last frame that read. A bag its reader says is not complete (`hasCompleted` false: not
 * finished, or read around damage) fails too, with the reader's own words. `quick`: the file opened, so its structure
 * and summary were read; nothing more is done.
 */
export async function readThroughCheck(
  backend: BackendReader,
  quick: boolean,
  onProgress?: ProgressCallback,
): Promise<CheckReport> {
  const info = backend.info();
  const expected = info.messageCount;
  const problems = new ProblemList(backend.path);
  // A file its reader found unfinished (or read around damage in) is not sound, even when every frame in it reads:
  // an MCAP file without its footer read whole, so check said "ok" (found by hand: .mcap files cut in their summary).
  if (info.hasCompleted === false) problems.add(incompleteProblem(info));
  if (quick) return problems.report(backend.path, true, expected);
  let frames = 0;
  let lastUrl: string | undefined;
  let lastUs: number | undefined;
  try {
    for (const frame of backend.frames({})) {
      frames++;
      lastUrl = frame.url;
      lastUs = frame.timestamp;
      if (frames % SLICE === 0) {
        onProgress?.({ done: frames, total: Math.max(expected, frames), unit: 'frames' });
        await yieldToEventLoop();
      }
    }
  } catch (error) {
    const known = BagError.isInstance(error);
    const reason = known ? error.detail : String(error instanceof Error ? error.message : error);
    const where = lastUrl === undefined ? 'before the first frame' : `after ${frames} frames (the last of ${lastUrl})`;
    problems.add(`reading stopped ${where}: ${reason}`, {
      ...(known && error.offset !== undefined ? { offset: error.offset } : {}),
      ...(lastUrl === undefined ? {} : { url: known && error.url !== undefined ? error.url : lastUrl }),
      ...(lastUs === undefined ? {} : { timeUs: lastUs }),
    });
    return problems.report(backend.path, false, frames);
  }
  onProgress?.({ done: frames, total: frames, unit: 'frames' });
  if (frames !== expected) problems.add(`the file's summary counts ${expected} messages, but ${frames} were read`);
  return problems.report(backend.path, false, frames);
}

/** Why a bag is not complete, in its reader's words (its `*.problems`, see `infoProblems`). */
function incompleteProblem(info: Info): string {
  const notes = infoProblems(info);
  return notes.length > 0
    ? `the bag is not complete: ${notes.join('; ')}`
    : 'the bag is not complete: its reader found it unfinished or damaged';
}
