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

/** The extensions whose backend also reads them with a segment number after them (`Backend.numberedSegments`). */
export function registeredNumberedExtensions(): string[] {
  return [...readers]
    .filter(([, backend]) => backend.numberedSegments)
    .map(([ext]) => ext)
    .sort();
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
  return purpose === 'write' ? writers.get(extensionOf(path)) : readers.get(bagExtensionOf(path));
}

/**
 * The extension a bag is read by: a numbered segment's (`x.record.00000` → `.record`) where the backend of that
 * extension declares `numberedSegments`, else the path's own (`extensionOf`).
 */
export function bagExtensionOf(path: string): string {
  const ext = extensionOf(path);
  if (readers.has(ext)) return ext;
  const numbered = numberedSegmentExtensionOf(path);
  return numbered !== undefined && readers.get(numbered)?.numberedSegments ? numbered : ext;
}

/** `x.record.00000` → `.record`: the extension before a segment number (`Backend.numberedSegments`), if any. */
export function numberedSegmentExtensionOf(path: string): string | undefined {
  const segment = /^(.*)\.\d+$/.exec(path);
  const ext = segment ? extensionOf(segment[1]!) : '';
  return ext === '' ? undefined : ext;
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
  const candidates = all.filter((b) => b.magic?.length || b.directoryMarker || b.directoryFiles);
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
