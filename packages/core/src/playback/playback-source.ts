import type { TimeBase } from '../backend/backend.js';
import type { Frame } from '../model/frame.js';

/** What one pass reads: µs bounds (inclusive; `endUs` 0 = open) and playback urls (empty = all). */
export interface PassWindow {
  beginUs: number;
  endUs: number;
  filterUrls: readonly string[];
  /** Which time the bounds apply to (and the player paces by). */
  timeBase: TimeBase;
}

/** The read side of a bag plugin as the player uses it (format reference §7.4): reset per session, read per frame, flush per pass. */
export interface ReadPlugin {
  onRead(frame: Frame): void;
  onReset(): void;
  flush(): void;
}

/**
 * What the player needs from a reader; the seam that keeps pacing independent of backends. `open` applies the
 * window, the url remap and the filter, and fills `serType`/`schemaType` by the playback url, so frames arrive ready
 * for the plugin and the callbacks.
 */
export interface PlaybackSource {
  /** ms from recording start to the last frame, and to the first one (VLink `total_duration`, `blank_duration`). */
  durations(): { totalMs: number; blankMs: number };
  open(window: PassWindow): Iterator<Frame>;
  /** The bound read plugin, if any; the host routes what it emits to `Player.deliver`. */
  readPlugin(): ReadPlugin | undefined;
}
