const setImmediateFn = (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate;

/**
 * Runs `fn` after pending I/O callbacks: setImmediate where the runtime has it (Node, Bun, Deno), else a 0 ms
 * timeout (browsers). Used to slice long loops so they never hold the event loop.
 */
export function scheduleSoon(fn: () => void): void {
  if (setImmediateFn) setImmediateFn(fn);
  else setTimeout(fn, 0);
}

export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => scheduleSoon(resolve));
}

/** Lets the process exit while a housekeeping timer is armed (no-op where timers have no `unref`). */
export function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}
