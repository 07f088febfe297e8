import { statSync } from 'node:fs';
import type { TimeBase } from '../common/time-base.js';
import type { MessageWindow, Ros2Storage, StorageMessage } from './storage.js';

/**
 * A storage with something to undo when it closes: read from a temporary copy of a storage file (decompressed, for
 * `file` compression; or as is, for a WAL database that cannot be read where it is), it reports the file of the bag
 * (name and size on disk), not the copy, and deletes the copy; read in place, it removes the `-shm`/`-wal` SQLite
 * created beside the bag (wal-copy.ts).
 */
export class CopiedStorage implements Ros2Storage {
  readonly fileSize: number;

  constructor(
    private readonly inner: Ros2Storage,
    readonly file: string,
    private readonly copy: { remove(): void },
  ) {
    this.fileSize = statSync(file).size;
  }

  get identifier() {
    return this.inner.identifier;
  }
  get topics() {
    return this.inner.topics;
  }
  get definitions() {
    return this.inner.definitions;
  }
  get counts() {
    return this.inner.counts;
  }
  get firstNs() {
    return this.inner.firstNs;
  }
  get lastNs() {
    return this.inner.lastNs;
  }
  get complete() {
    return this.inner.complete;
  }
  get problems() {
    return this.inner.problems;
  }
  get unfinished() {
    return this.inner.unfinished;
  }
  get embeddedMetadata() {
    return this.inner.embeddedMetadata;
  }
  get rosDistro() {
    return this.inner.rosDistro;
  }

  messages(window: MessageWindow, base: TimeBase): IterableIterator<StorageMessage> {
    return this.inner.messages(window, base);
  }

  close(): void {
    try {
      this.inner.close();
    } finally {
      this.copy.remove();
    }
  }
}
