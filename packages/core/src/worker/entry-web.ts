// Worker-side adapter for Web Workers (Bun, browsers, Deno when asked for): fits the global scope to ParentLink.
import type { ParentLink } from './link.js';
import { serveWriter } from './writer-service.js';

interface WorkerScope {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  close(): void;
}

const scope = globalThis as unknown as WorkerScope;
const link: ParentLink = {
  post: (message, transfer) => scope.postMessage(message, transfer ?? []),
  onMessage: (handler) => scope.addEventListener('message', (event) => handler(event.data)),
  close: () => scope.close(),
};
serveWriter(link);
