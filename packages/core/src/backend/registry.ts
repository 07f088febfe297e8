import { BagError } from '../errors.js';
import type { Backend } from './backend.js';

/**
 * Maps file extensions to backends. `@vlink/bag` registers the SQLite and MCAP backends; a program may register its
 * own. Kept as one module-level registry so `BagWriter.create(path)` needs no backend argument.
 */
const byExtension = new Map<string, Backend>();

export function registerBackend(backend: Backend): void {
  for (const ext of backend.extensions) byExtension.set(ext.toLowerCase(), backend);
}

export function registeredExtensions(): string[] {
  return [...byExtension.keys()].sort();
}

export function extensionOf(path: string): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const dot = path.lastIndexOf('.');
  return dot > slash ? path.slice(dot).toLowerCase() : '';
}

/** The backend for a path, or undefined (VLink's `filter_get` returns null for an unsupported extension). */
export function findBackend(path: string): Backend | undefined {
  return byExtension.get(extensionOf(path));
}

export function backendFor(path: string): Backend {
  const backend = findBackend(path);
  if (backend) return backend;
  const supported = registeredExtensions();
  throw new BagError(
    'UNSUPPORTED_FORMAT',
    `unsupported bag extension "${extensionOf(path) || '(none)'}"; supported: ${supported.length ? supported.join(', ') : 'none registered (import @vlink/bag)'}`,
    { file: path },
  );
}
