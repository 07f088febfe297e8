import { BagError } from '../errors.js';
import type { Backend } from './backend.js';
import { sniffPath } from './sniff.js';

/**
 * Maps file extensions to backends. `@vlink/bag` registers its backends; a program may register its own. Kept as one
 * module-level registry so `BagWriter.create(path)` needs no backend argument. Readers and writers have a table each:
 * a read-only backend (a foreign format) claims its extensions for reading only.
 */
const readers = new Map<string, Backend>();
const writers = new Map<string, Backend>();
/** Every registered backend, in registration order (for content sniffing). */
const all: Backend[] = [];

/** What a path is opened for: reading picks among every backend, writing only among backends that write. */
export type BackendPurpose = 'read' | 'write';

export function registerBackend(backend: Backend): void {
  for (const ext of backend.extensions) {
    readers.set(ext.toLowerCase(), backend);
    if (!backend.readOnly) writers.set(ext.toLowerCase(), backend);
  }
  const known = all.findIndex((b) => b.name === backend.name);
  if (known >= 0) all.splice(known, 1);
  all.push(backend);
}

/** The extensions some backend reads (`'read'`, the default) or writes (`'write'`), sorted. */
export function registeredExtensions(purpose: BackendPurpose = 'read'): string[] {
  return [...(purpose === 'write' ? writers : readers).keys()].sort();
}

/**
 * The folders some backend reads as one bag (a rosbag2 folder, by its `metadata.yaml`): marker file name → backend
 * name. What a listing of bags uses to take such a folder as one bag instead of looking into it.
 */
export function registeredFolderMarkers(): ReadonlyMap<string, string> {
  return new Map(all.filter((b) => b.directoryMarker).map((b) => [b.directoryMarker!, b.name]));
}

export function extensionOf(path: string): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const dot = path.lastIndexOf('.');
  return dot > slash ? path.slice(dot).toLowerCase() : '';
}

/** The backend for a path's extension, or undefined (VLink's `filter_get` returns null for an unsupported extension). */
export function findBackend(path: string, purpose: BackendPurpose = 'read'): Backend | undefined {
  const backend = (purpose === 'write' ? writers : readers).get(extensionOf(path));
  if (backend || purpose === 'write') return backend;
  const segment = /^(.*)\.\d+$/.exec(path);
  const numbered = segment ? readers.get(extensionOf(segment[1]!)) : undefined;
  return numbered?.numberedSegments ? numbered : undefined;
}

export function backendFor(path: string, purpose: BackendPurpose = 'read'): Backend {
  const backend = findBackend(path, purpose);
  if (backend) return backend;
  throw unsupported(path, purpose);
}

/**
 * The backend that reads `path`: by extension, else by content — a directory by a backend's `directoryMarker`, a
 * file by a backend's `magic` (e.g. an MCAP file without its extension). `UNSUPPORTED_FORMAT` when nothing claims it.
 */
export async function detectBackend(path: string): Promise<Backend> {
  const byExtension = findBackend(path, 'read');
  if (byExtension) return byExtension;
  const candidates = all.filter((b) => b.magic?.length || b.directoryMarker);
  const found = candidates.length > 0 ? await sniffPath(path, candidates) : undefined;
  if (found) return found;
  throw unsupported(path, 'read');
}

function unsupported(path: string, purpose: BackendPurpose): BagError {
  const supported = registeredExtensions(purpose);
  const ext = extensionOf(path);
  const readOnly = purpose === 'write' && readers.has(ext) ? ` (${ext} is read-only)` : '';
  return new BagError(
    'UNSUPPORTED_FORMAT',
    `unsupported bag extension "${ext || '(none)'}"${readOnly}; supported${purpose === 'write' ? ' for writing' : ''}: ${supported.length ? supported.join(', ') : 'none registered (import @vlink/bag)'}`,
    { file: path },
  );
}
