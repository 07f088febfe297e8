import type { ReaderOptions } from '../model/config.js';
import { BagError } from '../errors.js';
import type { BackendReader } from './backend.js';
import { openByteSource, type ByteSource } from './byte-source.js';
import { backendFor, bagExtensionOf } from './registry.js';

/**
 * A url's bytes to the backend its extension names: its `openSource` when it reads from a byte source, else the
 * source's local copy opened with its `openReader`. The source is the reader's from then on (closed on failure).
 */
export async function openSourceReader(
  path: string,
  source: ByteSource,
  options: ReaderOptions,
): Promise<BackendReader> {
  try {
    const backend = backendFor(path, 'read');
    if (options.readOnly === false)
      throw new BagError('NOT_SUPPORTED', 'a bag behind a url is read-only', { file: path });
    if (backend.openSource) return await backend.openSource(source, options);
    if (!source.localCopy)
      throw new BagError('NOT_SUPPORTED', `the ${backend.name} backend reads only local files`, { file: path });
    const local = await source.localCopy(bagExtensionOf(path));
    source.close();
    return await backend.openReader(local, options);
  } catch (error) {
    source.close();
    throw error;
  }
}

/** Opens the bag at a url of a registered scheme (a split recording's segment behind a url, for one). */
export async function openUrlReader(path: string, options: ReaderOptions): Promise<BackendReader> {
  const source = await openByteSource(path);
  if (!source) throw new BagError('INVALID_ARGUMENT', 'not a url of a registered scheme', { file: path });
  return openSourceReader(path, source, options);
}
