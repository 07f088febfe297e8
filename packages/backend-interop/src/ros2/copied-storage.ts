import { statSync } from 'node:fs';
import type { TimeBase } from '../common/time-base.js';
import type { DecompressedCopy } from './compression.js';
import type { MessageWindow, Ros2Storage, StorageMessage } from './storage.js';

/**
 * A storage read from a decompressed copy of a `file`-compressed storage file: it reports the file of the bag (name
 * and size on disk), not the temporary copy, and deletes the copy when it closes.
 */
export class CopiedStorage implements Ros2Storage {
  readonly fileSize: number;

  constructor(
    private readonly inner: Ros2Storage,
    readonly file: string,
    private readonly copy: DecompressedCopy,
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
