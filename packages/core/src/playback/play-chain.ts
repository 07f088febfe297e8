import type { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';

/**
 * One logical playback: the session started by `play()` and the sessions its jumps start. It ends at the next
 * finish (a jump does not finish it). Async iterators subscribe to a chain, not to a single session, so a jump
 * during a `for await` keeps the loop going from the new position.
 */
export class PlayChain {
  readonly subscribers = new Set<FrameSubscriber>();
  readonly finished: Promise<boolean>;
  private resolveFinished!: (interrupted: boolean) => void;
  private done = false;

  constructor() {
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
  }

  get ended(): boolean {
    return this.done;
  }

  /** Ends the chain: subscribers finish (or fail with `error`) once they have taken what is queued. */
  settle(interrupted: boolean, error?: BagError): void {
    if (this.done) return;
    this.done = true;
    for (const subscriber of this.subscribers) subscriber.end(error);
    this.subscribers.clear();
    this.resolveFinished(interrupted);
  }
}

/**
 * The queue between the player and one async iterator. The player may not read the next frame while the consumer
 * still holds one (a frame's data is valid until the next read), so `push` returns a promise that resolves when the
 * consumer comes back for more with nothing left queued; the player awaits it, which paces the loop to the consumer.
 */
export class FrameSubscriber implements AsyncIterator<Frame, undefined> {
  private readonly queue: Frame[] = [];
  private waiting: ((result: IteratorResult<Frame, undefined>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private drained: Promise<void> | undefined;
  private resolveDrained: (() => void) | undefined;
  private finished = false;
  private error: BagError | undefined;

  constructor(private readonly onReturn: () => void) {}

  push(frame: Frame): Promise<void> | undefined {
    if (this.finished) return undefined;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = this.failWaiting = undefined;
      waiting({ value: frame, done: false });
    } else {
      this.queue.push(frame);
    }
    return (this.drained ??= new Promise((resolve) => (this.resolveDrained = resolve)));
  }

  end(error?: BagError): void {
    if (this.finished) return;
    this.finished = true;
    this.error = error;
    this.release();
    if (this.waiting) {
      const [resolve, reject] = [this.waiting, this.failWaiting!];
      this.waiting = this.failWaiting = undefined;
      if (error) reject(error);
      else resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<Frame, undefined>> {
    // Coming back for more means the consumer is done with every frame handed out so far.
    if (this.queue.length === 0) this.release();
    const frame = this.queue.shift();
    if (frame) return Promise.resolve({ value: frame, done: false });
    if (this.finished)
      return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failWaiting = reject;
    });
  }

  return(): Promise<IteratorResult<Frame, undefined>> {
    if (!this.finished) {
      this.finished = true;
      this.queue.length = 0;
      this.release();
      this.onReturn();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  private release(): void {
    const resolve = this.resolveDrained;
    this.drained = this.resolveDrained = undefined;
    resolve?.();
  }
}
