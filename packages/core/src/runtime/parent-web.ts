// Worker-side adapter for Web Workers (Bun, browsers, Deno when asked for): fits the global scope to ParentLink.
import type { ParentLink } from './worker-link.js';

interface WorkerScope {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  close(): void;
}

export function webParentLink(): ParentLink {
  const scope = globalThis as unknown as WorkerScope;
  return {
    post: (message, transfer) => scope.postMessage(message, transfer ?? []),
    onMessage: (handler) => scope.addEventListener('message', (event) => handler(event.data)),
    close: () => scope.close(),
  };
}
