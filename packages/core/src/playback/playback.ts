import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { FrameSubscriber, type PlayChain } from './play-chain.js';

/**
 * What `play()` returns: a handle on the playback it started. Ignore it for VLink-style callbacks, or iterate it:
 * `for await (const frame of reader.play(config))` yields the same frames the output callback gets, paced the same
 * way; the loop waits for the consumer (a slow consumer delays playback instead of piling frames up). Leaving the loop
 * early (`break`, a throw, or aborting `signal`) stops the playback. A jump keeps the iteration going; it ends when
 * the playback finishes. Like every frame a reader hands out, a yielded frame's `data` is valid until the next one.
 */
export class Playback implements AsyncIterable<Frame> {
  /** Resolves when this playback finishes: true when interrupted (stop, quit, abort, error), false after the last pass. */
  readonly finished: Promise<boolean>;

  constructor(
    private readonly chain: PlayChain,
    private readonly stopIfCurrent: () => void,
    private readonly signal?: AbortSignal,
  ) {
    this.finished = chain.finished;
  }

  [Symbol.asyncIterator](): AsyncIterator<Frame, undefined> {
    const subscriber = new FrameSubscriber(() => {
      this.chain.subscribers.delete(subscriber);
      this.stopIfCurrent();
    });
    if (this.signal?.aborted) subscriber.end(aborted(this.signal));
    else if (this.chain.ended) subscriber.end();
    else {
      this.chain.subscribers.add(subscriber);
      this.signal?.addEventListener('abort', () => subscriber.end(aborted(this.signal!)), { once: true });
    }
    return subscriber;
  }
}

export function aborted(signal: AbortSignal): BagError {
  return new BagError('ABORTED', 'playback was aborted', { cause: signal.reason });
}
