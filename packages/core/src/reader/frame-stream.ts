import type { BackendReader, CursorQuery } from '../backend/backend.js';
import type { Frame } from '../model/frame.js';
import type { ReadUrlMap } from './url-map.js';

/**
 * Opens a backend cursor for a query on playback urls: without a plugin the backend's own iterator (no extra cost
 * per frame), with one the remapped stream. Used by cursors, `frames()` and playback alike, so all three see the same
 * urls (format reference §7.5: remap and exclusions apply to cursors too; `onRead` does not).
 */
export function openFrames(
  backend: BackendReader,
  query: CursorQuery,
  urls: ReadUrlMap | undefined,
): IterableIterator<Frame> {
  if (query.timeBase === 'publish') {
    const { beginUs, endUs, timeBase: _, ...byUrl } = query;
    return inPublishWindow(openFrames(backend, byUrl, urls), beginUs ?? -Infinity, endUs ?? Infinity);
  }
  if (!urls) return backend.frames(query);
  return remapped(backend.frames(urls.storedQuery(query)), urls);
}

/** The frames whose publish time (the log time where a frame has none) is in [begin, end]. */
function* inPublishWindow(frames: IterableIterator<Frame>, begin: number, end: number): IterableIterator<Frame> {
  for (const frame of frames) {
    const t = frame.publishTime ?? frame.timestamp;
    if (t >= begin && t <= end) yield frame;
  }
}

function* remapped(frames: IterableIterator<Frame>, urls: ReadUrlMap): IterableIterator<Frame> {
  for (const frame of frames) {
    const mapped = urls.map(frame);
    if (mapped) yield mapped;
  }
}
