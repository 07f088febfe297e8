import { createApp } from '../app.js';
import { listenBun } from './bun-listener.js';
import { type Adapter, listenOptionsOf } from './contract.js';

/** Bun: the bag API on `Bun.serve` with hono's Bun WebSocket handler (see `bun-listener.ts`). */
export const serveBun: Adapter = (options) =>
  listenBun((runtime) => createApp({ ...options, ...runtime }), listenOptionsOf(options));
