import { BagError, type Backend } from '@vlink/bag';

/** Never notified: each wait on it sleeps its full timeout. */
const never = new Int32Array(new SharedArrayBuffer(4));

/**
 * A backend whose reader never returns from `openReader`: a synchronous endless loop, as a SQLite statement that
 * cannot be interrupted would be. Registered for `.hang` by the security tests, with `workerModule` so the server
 * loads it in its bag workers, where the pool must notice the stuck thread and terminate it. Never run it on a thread
 * you need.
 *
 * The loop sleeps (`Atomics.wait`) instead of spinning: a spinning worker took one of CI's two cores for the 6.5 s
 * until the pool terminated it, and the other bags' opens then missed the tests' deadline. It wakes every 10 ms, so
 * termination (checked between statements) ends it on every runtime.
 */
export const hangBackend: Backend = {
  name: 'test-hang',
  extensions: ['.hang'],
  workerModule: import.meta.url,
  createWriter: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test backend')),
  openReader: async () => {
    for (;;) {
      // Nothing else in this thread runs again.
      Atomics.wait(never, 0, 0, 10);
    }
  },
};
