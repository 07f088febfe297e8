import { BagError } from '../errors.js';
import { signalAdapter, type SignalAdapter, type TerminateSignal } from '../runtime/signals.js';
import { BagWriter } from './bag-writer.js';

export interface TerminateSignalOptions {
  /** Signals to catch (default SIGINT and SIGTERM). */
  signals?: TerminateSignal[];
  /** Leave the process after closing (default true, with 128 + signal number as the exit code). */
  exit?: boolean;
  /** @internal Tests replace the runtime's signal API. */
  adapter?: SignalAdapter;
}

const SIGNAL_NUMBERS: Record<TerminateSignal, number> = { SIGINT: 2, SIGTERM: 15 };

/**
 * For CLIs (VLink `register_terminate_signal`): on SIGINT/SIGTERM, close the given writers (or run the callback) and
 * every writer from `BagWriter.globalGet`/`filterGet`, so each file is drained and marked complete, then exit with
 * 130/143. A second signal while closing exits at once. Returns a function that removes the listeners.
 */
export function registerTerminateSignal(
  target: BagWriter | readonly BagWriter[] | (() => unknown) = [],
  options: TerminateSignalOptions = {},
): () => void {
  const adapter = options.adapter ?? signalAdapter();
  if (!adapter) throw new BagError('NOT_SUPPORTED', 'this runtime has no signal API');
  let closing = false;
  const removers = (options.signals ?? ['SIGINT', 'SIGTERM']).map((signal) => {
    const handler = () => {
      const code = 128 + SIGNAL_NUMBERS[signal];
      if (closing) return adapter.exit(code);
      closing = true;
      void shutDown(target).finally(() => {
        if (options.exit !== false) adapter.exit(code);
      });
    };
    return adapter.listen(signal, handler);
  });
  return () =>
    removers.forEach((remove) => {
      remove();
    });
}

async function shutDown(target: BagWriter | readonly BagWriter[] | (() => unknown)): Promise<void> {
  const writers = typeof target === 'function' ? [] : Array.isArray(target) ? target : [target as BagWriter];
  const results = await Promise.allSettled([
    typeof target === 'function' ? target() : undefined,
    ...writers.map((writer) => writer.close()),
    BagWriter.closeShared(),
  ]);
  // Leaving anyway is the point of a signal handler; say why a file may be incomplete instead of hiding it.
  for (const result of results)
    if (result.status === 'rejected') console.error('vlink-bag: closing on signal failed:', result.reason);
}
