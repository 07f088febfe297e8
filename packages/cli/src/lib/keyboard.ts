import { emitKeypressEvents } from 'node:readline';

/** The keys the interactive verbs understand. */
export type KeyName = 'space' | 'left' | 'right' | 'up' | 'down' | 'p' | 'q' | 'escape' | 'ctrl-c';

/**
 * Reads single key presses from a terminal stdin in raw mode and reports the ones in {@link KeyName}. Returns a
 * function that restores the terminal; it also runs at process exit. Does nothing (and returns a no-op) when stdin is
 * not a terminal.
 */
export function listenKeys(onKey: (key: KeyName) => void): () => void {
  const stdin = process.stdin;
  if (!stdin.isTTY) return () => {};
  emitKeypressEvents(stdin);
  stdin.setRawMode(true);
  stdin.resume();
  const handler = (text: string | undefined, key: { name?: string; ctrl?: boolean; sequence?: string } | undefined) => {
    if (key?.ctrl && key.name === 'c') return onKey('ctrl-c');
    const name = key?.name ?? text;
    switch (name) {
      case 'space':
      case ' ':
        return onKey('space');
      case 'left':
      case 'right':
      case 'up':
      case 'down':
      case 'escape':
        return onKey(name);
      case 'p':
      case 'q':
        return onKey(name);
      default:
        return undefined;
    }
  };
  stdin.on('keypress', handler);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    stdin.off('keypress', handler);
    try {
      stdin.setRawMode(false);
    } catch {
      // the terminal may already be gone at exit
    }
    stdin.pause();
  };
  process.once('exit', restore);
  return restore;
}
