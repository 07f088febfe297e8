import { BagError } from '@vlink/bag';
import { createApp } from './app.js';
import { isLoopbackHost, listenOptionsOf, type RunningServer, type ServeOptions } from './adapters/contract.js';
import { runtimeListener } from './adapters/runtime.js';

export { isLoopbackHost } from './adapters/contract.js';
export type { Adapter, RunningServer, ServeOptions } from './adapters/contract.js';
export { detectRuntime } from './adapters/runtime.js';

/**
 * Serves the API with the current runtime's listener. Refuses (BagError INVALID_ARGUMENT) to bind a non-loopback host
 * without a token, because the API exposes every bag under the root.
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8765;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new BagError('INVALID_ARGUMENT', `invalid port ${port}`);
  if (!isLoopbackHost(host) && !options.token) {
    throw new BagError(
      'INVALID_ARGUMENT',
      `refusing to listen on ${host} without a token: pass a token, or bind 127.0.0.1`,
    );
  }
  const listen = await runtimeListener();
  return listen((runtime) => createApp({ ...options, ...runtime }), listenOptionsOf({ ...options, host, port }));
}
