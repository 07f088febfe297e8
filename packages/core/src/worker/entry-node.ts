// Worker-side adapter for `node:worker_threads` (Node, Deno): fits `parentPort` to ParentLink.
import { parentPort } from 'node:worker_threads';
import type { ParentLink } from './link.js';
import { serveWriter } from './writer-service.js';

const port = parentPort!;
const link: ParentLink = {
  post: (message, transfer) => port.postMessage(message, transfer),
  onMessage: (handler) => void port.on('message', handler),
  close: () => port.close(),
};
serveWriter(link);
