import type { SignalAdapter } from './signals.js';

interface DenoSignals {
  addSignalListener(signal: string, handler: () => void): void;
  removeSignalListener(signal: string, handler: () => void): void;
  exit(code: number): void;
  build?: { os?: string };
}

/** `Deno.addSignalListener`; Windows Deno only knows SIGINT (and SIGBREAK), so SIGTERM is skipped there. */
export function denoSignals(): SignalAdapter | undefined {
  const deno = (globalThis as { Deno?: DenoSignals }).Deno;
  if (!deno?.addSignalListener) return undefined;
  return {
    listen(signal, handler) {
      if (signal !== 'SIGINT' && deno.build?.os === 'windows') return () => {};
      deno.addSignalListener(signal, handler);
      return () => deno.removeSignalListener(signal, handler);
    },
    exit: (code) => deno.exit(code),
  };
}
