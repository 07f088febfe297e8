import type { PlayChain } from './play-chain.js';
import type { ResolvedPlayConfig } from './play-config.js';

/** How a pass ended: naturally, by stop/quit/error, by a jump, or with nothing to play. */
export type PassEnd = 'end' | 'interrupted' | 'jump' | 'empty';

/** One session (format reference §7.4): a `play()` or a jump, with its own stop/jump/quit flags. */
export interface Session {
  config: ResolvedPlayConfig;
  /** Begin of the first pass (ms); later passes start at the config's begin. */
  beginMs: number;
  rate: number;
  times: number;
  autoPause: boolean;
  /** `play()` clears the pause and step flags; deferred to the session's start when another session still runs. */
  clearFlags: boolean;
  chain: PlayChain;
  stop: boolean;
  jump: boolean;
  quit: boolean;
  done: Promise<void>;
}

export function newSession(
  config: ResolvedPlayConfig,
  init: Omit<Session, 'config' | 'stop' | 'jump' | 'quit' | 'done'>,
): Session {
  return { config, ...init, stop: false, jump: false, quit: false, done: Promise.resolve() };
}

export function interrupted(s: Session): boolean {
  return s.stop || s.jump || s.quit;
}
