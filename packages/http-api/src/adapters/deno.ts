import { createApp } from '../app.js';
import { type Adapter, listenOptionsOf } from './contract.js';
import { listenDeno } from './deno-listener.js';

/** Deno: the bag API on `Deno.serve` with hono's Deno WebSocket upgrade (see `deno-listener.ts`). */
export const serveDeno: Adapter = (options) =>
  listenDeno((runtime) => createApp({ ...options, ...runtime }), listenOptionsOf(options));
