import type { BackendWriter } from '../backend/backend.js';
import type { Frame } from '../model/frame.js';
import { UrlIds } from '../writer/frame-admission.js';

/** One id per url for the whole process: stricter than the contract needs (one recording), and simple to share. */
const ids = new UrlIds();

/**
 * Writes `frame` straight to a backend's writer (as the writer engine would, without one) with the url id a
 * recording gives its url (`BackendWriter.write`): the same for every frame of a url, never shared by two urls.
 */
export function writeFrame(writer: Pick<BackendWriter, 'write'>, frame: Frame): void {
  writer.write(frame, ids.of(frame.url));
}
