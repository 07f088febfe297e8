import { createApp } from '../app.js';
import { type Adapter, listenOptionsOf } from './contract.js';
import { listenNode } from './node-listener.js';

/** Node: the bag API on `@hono/node-server` and `@hono/node-ws` (see `node-listener.ts`). */
export const serveNode: Adapter = (options) =>
  listenNode((runtime) => createApp({ ...options, ...runtime }), listenOptionsOf(options));
