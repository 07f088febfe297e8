const setImmediateFn = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;

/**
 * Runs `fn` after pending I/O callbacks: setImmediate where the runtime has it (Node, Bun, Deno), else a 0 ms
 * timeout (browsers). Used to slice long loops so they never hold the event loop.
 */
export function scheduleSoon(fn: () => void): void {
  if (setImmediateFn) setImmediateFn(fn);
  else setTimeout(fn, 0);
}

const settled = Promise.resolve();

/**
 * Runs `fn` once the current task's synchronous code is done (a promise reaction). Far cheaper to arm than
 * `scheduleSoon` as the first thing in a task (bench/writer.bench.mjs, pushWarmth's `arming`: `setImmediate` 22 µs p50
 * in Node and 67 µs in Deno, a promise reaction 1–6 µs). It runs before pending I/O, so it is for short hand-overs,
 * not for slicing long loops (keep `scheduleSoon` there).
 */
export function afterCurrentTask(fn: () => void): void {
  void settled.then(fn);
}

export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => scheduleSoon(resolve));
}

/** Lets the process exit while a housekeeping timer is armed (no-op where timers have no `unref`). */
export function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}
