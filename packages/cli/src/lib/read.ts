import type { BagReader, CursorConfig, Frame } from '@vlink/bag';

/**
 * The frames of a bag through the reader's synchronous cursor (VLink `open_cursor`/`read_next`): no promise per
 * frame, so listing or copying a large bag stays fast. Like every reader frame, a yielded frame's `data` is valid
 * until the next one. A cursor failure is thrown at the end instead of ending the listing silently.
 */
export function* cursorFrames(reader: BagReader, config: CursorConfig = {}): Generator<Frame, void, undefined> {
  if (reader.openCursor(config)) {
    for (let frame = reader.next(); frame; frame = reader.next()) yield frame;
  }
  if (reader.fail()) {
    const error = reader.getLastError();
    if (error) throw error;
    throw new Error('reading failed');
  }
}
