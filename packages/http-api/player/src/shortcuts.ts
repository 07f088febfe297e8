import { useEffect, useRef } from 'preact/hooks';

export type Shortcuts = Record<string, (event: KeyboardEvent) => void>;

/**
 * Page-wide keys (see the README): ignored while typing in a field and with Ctrl/Meta/Alt held, so browser
 * shortcuts keep working. The handlers are read at key time, so they always see the current state.
 */
export function useShortcuts(shortcuts: Shortcuts): void {
  const latest = useRef(shortcuts);
  latest.current = shortcuts;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
      const target = event.target as HTMLElement | null;
      if (target && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName))) return;
      const handler = latest.current[event.key] ?? latest.current[event.key.toLowerCase()];
      if (!handler) return;
      // Space would also "click" a focused button: the shortcut replaces that.
      event.preventDefault();
      handler(event);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
