import { findBackend } from '../backend/registry.js';
import { envVar } from './recording-context.js';

interface Closable {
  close(): Promise<void>;
  waitForQuit(): Promise<void>;
}

/**
 * The process-wide writers behind `BagWriter.globalGet()` and `BagWriter.filterGet(path)`. Creation is async, so the
 * maps hold promises: concurrent first calls share one writer. A writer leaves the map once it has quit, so a later
 * call opens a fresh recording instead of handing out a closed one; a failed creation is forgotten so it can retry.
 */
export class SharedWriters<W extends Closable, O extends { tagName?: string }> {
  private globalWriter: Promise<W | null> | undefined;
  private readonly byPath = new Map<string, Promise<W | null>>();

  constructor(private readonly create: (path: string, options: O) => Promise<W>) {}

  global(): Promise<W | null> {
    if (this.globalWriter) return this.globalWriter;
    const path = envVar('VLINK_BAG_PATH');
    if (!path || !findBackend(path, 'write')) return Promise.resolve(null);
    const created = this.open(path, { tagName: envVar('VLINK_BAG_TAG') ?? '' } as O, () => {
      if (this.globalWriter === created) this.globalWriter = undefined;
    });
    this.globalWriter = created;
    return created;
  }

  filter(path: string, options: O): Promise<W | null> {
    const known = this.byPath.get(path);
    if (known) return known;
    if (!path || !findBackend(path, 'write')) return Promise.resolve(null);
    const created = this.open(path, options, () => {
      if (this.byPath.get(path) === created) this.byPath.delete(path);
    });
    this.byPath.set(path, created);
    return created;
  }

  async closeAll(): Promise<void> {
    const all = await Promise.allSettled([this.globalWriter, ...this.byPath.values()]);
    await Promise.all(all.map((r) => (r.status === 'fulfilled' && r.value ? r.value.close() : undefined)));
  }

  private open(path: string, options: O, forget: () => void): Promise<W | null> {
    const created = this.create(path, options);
    created.then((writer) => writer.waitForQuit().then(forget), forget);
    return created;
  }
}
