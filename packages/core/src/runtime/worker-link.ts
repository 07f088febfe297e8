/**
 * The neutral contract between a thread and a worker program it starts (the writer worker, the HTTP server's bag
 * pool), whatever the runtime calls its threads. Each runtime adapter (`worker-node.ts`, `worker-web.ts`) fits its
 * native worker object to `WorkerLink` in a few dozen lines; the worker side sees the parent through `ParentLink`
 * (`parent-node.ts`, `parent-web.ts`). Only `ArrayBuffer`s are ever transferred.
 */

/** The parent's handle on a running worker. */
export interface WorkerLink {
  /** Which adapter runs it (for stats and tests). */
  readonly runtime: WorkerRuntime;
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  /** One handler each; set once, right after spawning. */
  onMessage(handler: (message: unknown) => void): void;
  /** The worker crashed or could not load (uncaught error, failed import, unexpected exit). */
  onFailure(handler: (error: Error) => void): void;
  /** Keeps the process alive while the worker has work (no-op where the runtime cannot unref a worker). */
  ref(): void;
  /** Lets the process exit while the worker idles, as an unclosed same-thread writer would. */
  unref(): void;
  /** Ends the thread (after `closed`, or after a failure) and resolves once it is gone. */
  exit(): Promise<void>;
}

/** The worker's handle on its parent. */
export interface ParentLink {
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  onMessage(handler: (message: unknown) => void): void;
  /** Ends the worker once its last message is posted. */
  close(): void;
}

export type WorkerRuntime = 'node' | 'web';
