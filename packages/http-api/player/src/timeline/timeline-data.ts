import type { Density, Gap } from '../api.js';
import type { Clock } from '../time-format.js';

export interface TimelineData {
  durationMs: number;
  /** One lane per url, top to bottom. */
  lanes: string[];
  /** The whole recording, coarse; always there once loaded. */
  overview?: Density | undefined;
  /** The visible window at about one bucket per pixel; used when it covers the view. */
  detail?: Density | undefined;
  gaps: ReadonlyMap<string, Gap[]>;
  /** Urls the url filter leaves out of the replay (drawn grey). */
  excluded: ReadonlySet<string>;
  selected?: string | undefined;
  /** Where the replay window starts (the blank start is shaded when "skip blank" is on). */
  rangeBeginMs: number;
  clock: Clock;
}

export interface TimelineCallbacks {
  seek(ms: number): void;
  select(url: string): void;
  /** The visible window changed (zoom, pan, resize): `px` is the plot width, for the detail density. */
  view(beginMs: number, endMs: number, px: number): void;
}
