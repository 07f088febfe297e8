import { Worker } from 'node:worker_threads';
import { inheritedExecArgv } from './exec-argv.js';
import type { BagError } from '../errors.js';
import {
  failThread,
  FAILED,
  HEAD,
  READY,
  RUNNING,
  SIGNAL,
  STATE,
  STOPPED,
  STOPPING,
  TAIL,
  threadError,
  type ThreadControl,
} from './thread-control.js';

/** How long one wait for the helper lasts before its state is looked at again. */
const WAIT_SLICE_MS = 100;
/**
 * A helper that is not even ready by then is taken as never started (its module failed to load, which would be
 * reported on an event loop the writer's thread is not running). A started helper is waited for however slow it is:
 * slow is not failed.
 */
const START_TIMEOUT_MS = 30_000;

export interface HelperThreadOptions {
  /** The helper's module (`node:worker_threads`, which Node, Bun and Deno all have). */
  module: URL;
  control: ThreadControl;
  /** Structured-cloned to the helper; SharedArrayBuffers in it are shared, not copied. */
  workerData: unknown;
  /** The error the writer throws for a helper's failure message. */
  failure: (message: string) => BagError;
}

/**
 * The writer's side of a helper thread: hands work over by moving `HEAD` and waits with `Atomics` until `TAIL` says
 * it is done. Blocking waits are allowed on the async writer's own thread (`RecordingContext.writerThread`), and on
 * the caller of a `syncMode` writer, whose `push` blocks while it writes anyway (waiting for a chunk takes no longer
 * than compressing it there would). A helper's failure is thrown by the writer's next wait or `throwIfFailed`.
 */
export class HelperThread {
  private readonly control: Int32Array;
  private readonly thread: Worker;
  private head = 0;

  constructor(private readonly options: HelperThreadOptions) {
    this.control = options.control.control;
    // Not the parent's flags as they are (see exec-argv.ts): under `node --input-type=module -` the helper's module
    // failed to load, and the compressor it serves was silently never used.
    this.thread = new Worker(options.module, { workerData: options.workerData, execArgv: inheritedExecArgv() });
    // The helper ends by itself after `stop`; it must never keep a process alive.
    this.thread.unref();
    // A helper that dies outside its own try (its module failed to load) is reported here, once this thread's event
    // loop runs; the next call then throws it. Without a listener the error would take the whole process down.
    this.thread.on('error', (error: unknown) => {
      if (Atomics.load(this.control, STATE) === RUNNING)
        failThread(options.control, error instanceof Error ? error.message : String(error));
    });
  }

  /**
   * Whether the helper has started and is ready for work. A helper takes a while to start — about 0.1 s, and 0.6 s for
   * one started by a worker on Deno (hand-measured) — and a writer that handed work to a helper still starting would
   * wait for it; callers do the work themselves until it is ready.
   */
  get ready(): boolean {
    return Atomics.load(this.control, READY) === 1;
  }

  /** Work the helper has done so far (modulo 2^32), as it last reported: never waits. */
  get done(): number {
    return Atomics.load(this.control, TAIL);
  }

  /** Work handed over so far (modulo 2^32). */
  get handed(): number {
    return this.head;
  }

  /** Hands `units` more work over and wakes the helper. */
  handOver(units: number): void {
    this.head = (this.head + units) | 0;
    Atomics.store(this.control, HEAD, this.head);
    this.signal();
  }

  /** Blocks until `ready(tail)` holds; throws when the helper failed or never started. */
  waitFor(ready: (tail: number) => boolean): void {
    for (let waited = 0; ; waited += WAIT_SLICE_MS) {
      const tail = Atomics.load(this.control, TAIL);
      if (ready(tail)) return;
      this.throwIfFailed();
      this.throwIfNeverStarted(waited);
      Atomics.wait(this.control, TAIL, tail, WAIT_SLICE_MS);
    }
  }

  /** Whether the helper failed (its error is what `throwIfFailed` throws). */
  get failed(): boolean {
    return Atomics.load(this.control, STATE) === FAILED;
  }

  throwIfFailed(): void {
    if (this.failed) throw this.options.failure(threadError(this.options.control));
  }

  /**
   * Asks the helper to finish what it was handed and end, and waits until it has (it notifies `TAIL` on the way out).
   * With nothing left undone there is nothing to wait for: the helper ends by itself when it next looks, also one still
   * starting (a recording on Deno that never needed its compressor waited 0.6 s at close for it to start and stop).
   */
  stop(): void {
    Atomics.compareExchange(this.control, STATE, RUNNING, STOPPING);
    this.signal();
    if (Atomics.load(this.control, TAIL) === this.head) return;
    for (let waited = 0; ; waited += WAIT_SLICE_MS) {
      const state = Atomics.load(this.control, STATE);
      if (state === STOPPED || state === FAILED) return;
      this.throwIfNeverStarted(waited);
      Atomics.wait(this.control, TAIL, Atomics.load(this.control, TAIL), WAIT_SLICE_MS);
    }
  }

  /** Wakes the helper to look at `HEAD` and `STATE` again. */
  private signal(): void {
    Atomics.add(this.control, SIGNAL, 1);
    Atomics.notify(this.control, SIGNAL);
  }

  private throwIfNeverStarted(waited: number): void {
    if (waited >= START_TIMEOUT_MS && Atomics.load(this.control, READY) === 0) {
      throw this.options.failure(`the helper thread did not start within ${START_TIMEOUT_MS / 1000} s`);
    }
  }
}

export function canWaitOnSharedMemory(): boolean {
  return typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object' && typeof Atomics.wait === 'function';
}
