import { denoSignals } from './signal-deno.js';
import { processSignals } from './signal-process.js';

export type TerminateSignal = 'SIGINT' | 'SIGTERM';

/** How a runtime lets a CLI catch SIGINT/SIGTERM and leave afterwards; one small adapter per runtime. */
export interface SignalAdapter {
  /** Adds a listener; returns the function that removes it. */
  listen(signal: TerminateSignal, handler: () => void): () => void;
  exit(code: number): void;
}

/** Deno's own API when present (its `process.on` shim is a compatibility layer), else Node/Bun's `process`. */
export function signalAdapter(): SignalAdapter | undefined {
  return denoSignals() ?? processSignals();
}
