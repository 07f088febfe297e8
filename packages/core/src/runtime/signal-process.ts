import type { SignalAdapter } from './signals.js';

interface ProcessSignals {
  on(signal: string, handler: () => void): unknown;
  off(signal: string, handler: () => void): unknown;
  exit(code: number): void;
}

/** Node and Bun: `process.on('SIGINT')`. A listener replaces the default "exit at once", which is what we want. */
export function processSignals(): SignalAdapter | undefined {
  const proc = (globalThis as { process?: ProcessSignals }).process;
  if (typeof proc?.on !== 'function') return undefined;
  return {
    listen(signal, handler) {
      proc.on(signal, handler);
      return () => proc.off(signal, handler);
    },
    exit: (code) => proc.exit(code),
  };
}
