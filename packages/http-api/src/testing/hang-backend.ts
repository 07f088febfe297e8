import { BagError, type Backend } from '@vlink/bag';

/**
 * A backend whose reader never returns from `openReader`: a synchronous endless loop, as a SQLite statement that
 * cannot be interrupted would be. Registered for `.hang` by the security tests, with `workerModule` so the server
 * loads it in its bag workers, where the pool must notice the stuck thread and terminate it. Never run it on a thread
 * you need.
 */
export const hangBackend: Backend = {
  name: 'test-hang',
  extensions: ['.hang'],
  workerModule: import.meta.url,
  createWriter: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test backend')),
  openReader: async () => {
    for (;;) {
      // Spin: nothing in this thread runs again.
    }
  },
};
