import type { Frame } from '../model/frame.js';
import type { SchemaType } from '../model/schema-type.js';

/** Which side a plugin is bound to (VLink `BagPluginInterface::Direction`). */
export enum PluginDirection {
  Read = 0,
  Write = 1,
}

/**
 * A bag plugin (VLink `BagPluginInterface`, ABI 2.0 semantics): it sits between the producer and storage when bound
 * to a writer (`onWrite`), or between storage and the user's callback when bound to a reader (`onRead`).
 *
 * A plugin passes frames on with `doCallback(frame)`, zero or more times and at any moment (a reorder buffer such as
 * `BagProcessor` emits later). `convertUrlMeta` renames a url or drops it (return `null`); it is asked once per
 * (url, ser, family) and its answer is cached by the host.
 */
export abstract class BagPluginInterface {
  private callback: ((frame: Frame) => void) | undefined;
  private boundDirection: PluginDirection | undefined;

  /** Called by `bindPluginInterface`; a plugin instance serves one host at a time. */
  attach(direction: PluginDirection, callback: (frame: Frame) => void): void {
    this.boundDirection = direction;
    this.callback = callback;
  }

  detach(): void {
    this.callback = undefined;
    this.boundDirection = undefined;
  }

  get direction(): PluginDirection | undefined {
    return this.boundDirection;
  }

  /** Hands a frame downstream (to storage or to the reader's output callback). */
  protected doCallback(frame: Frame): void {
    this.callback?.(frame);
  }

  /** Renames (return another url) or drops (return null) a url; default keeps it. */
  convertUrlMeta(url: string, _serType: string, _schemaType: SchemaType): string | null {
    return url;
  }

  /** Write side, before storage; the default passes the frame on unchanged. */
  onWrite(frame: Frame): void {
    this.doCallback(frame);
  }

  /** Read side (playback only, never cursors), before the output callback; default passes it on. */
  onRead(frame: Frame): void {
    this.doCallback(frame);
  }

  /** A new playback session (or writer) starts: forget buffered state. */
  onReset(): void {}

  /** Emit everything buffered (end of a playback pass, or writer close). */
  flush(): void {}
}

/** Caches a plugin's url decisions so `convertUrlMeta` runs once per (url, ser, family), not per frame. */
export class UrlRemapCache {
  private readonly cache = new Map<string, string | null>();
  constructor(private readonly plugin: BagPluginInterface) {}

  map(url: string, serType: string, schemaType: SchemaType): string | null {
    const key = `${url}\x1f${serType}\x1f${schemaType}`;
    let mapped = this.cache.get(key);
    if (mapped === undefined) {
      mapped = this.plugin.convertUrlMeta(url, serType, schemaType);
      this.cache.set(key, mapped);
    }
    return mapped;
  }
}
