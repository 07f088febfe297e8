// Worker-side adapter for `node:worker_threads` (Node, Deno): fits `parentPort` to ParentLink.
import { parentPort } from 'node:worker_threads';
import type { ParentLink } from './worker-link.js';

export function nodeParentLink(): ParentLink {
  const port = parentPort;
  if (!port) throw new Error('not running in a node:worker_threads worker');
  return {
    post: (message, transfer) => port.postMessage(message, transfer),
    onMessage: (handler) => void port.on('message', handler),
    close: () => port.close(),
  };
}
