import { BagError } from '../errors.js';

/*
 * Callbacks and plugins as plain JavaScript can pass them. A callback that is not a function was kept and called
 * later, on a timer or in a worker's message handler, where the TypeError it threw reached no caller; a plugin that is
 * not one threw a TypeError half-way through binding it, and the reader or writer kept it, so its `close()` threw too.
 */

/** Throws `INVALID_ARGUMENT` unless `callback` is a function (or undefined where that unregisters). */
export function checkCallback(name: string, callback: unknown, optional = true): void {
  if (typeof callback === 'function' || (optional && callback === undefined)) return;
  throw new BagError('INVALID_ARGUMENT', `${name} must be a function${optional ? ' or undefined' : ''}`);
}

/** Throws `INVALID_ARGUMENT` unless `plugin` has a plugin's `attach`/`detach` (or is undefined: unbinds). */
export function checkPlugin(plugin: unknown): void {
  if (plugin === undefined) return;
  const p = plugin as { attach?: unknown; detach?: unknown } | null;
  if (typeof p?.attach === 'function' && typeof p.detach === 'function') return;
  throw new BagError('INVALID_ARGUMENT', 'a plugin must be a BagPluginInterface (or undefined to unbind)');
}

/** Throws `INVALID_ARGUMENT` unless each hook named in `hooks` is a function. */
export function checkHooks(name: string, hooks: unknown): void {
  if (typeof hooks !== 'object' || hooks === null) throw new BagError('INVALID_ARGUMENT', `${name} must be an object`);
  for (const [key, hook] of Object.entries(hooks))
    if (hook !== undefined && typeof hook !== 'function')
      throw new BagError('INVALID_ARGUMENT', `${name}.${key} must be a function`);
}
