import { checkBagPath } from '../backend/bag-path.js';
import type { BackendReader, CursorQuery } from '../backend/backend.js';
import { openByteSource, urlScheme } from '../backend/byte-source.js';
import { openSourceReader } from '../backend/open-source.js';
import { detectBackend } from '../backend/registry.js';
import { BagError } from '../errors.js';
import type { CheckOptions, CheckReport } from '../maintenance/check-report.js';
import { readThroughCheck } from '../maintenance/read-through-check.js';
import type { ReindexOptions } from '../maintenance/repair-report.js';
import type { ReaderOptions } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info } from '../model/info.js';
import type { PlayConfig } from '../playback/play-config.js';
import type { PlayStatus } from '../playback/play-status.js';
import type { Playback } from '../playback/playback.js';
import type { PlaybackSource } from '../playback/playback-source.js';
import {
  Player,
  type FinishCallback,
  type OutputCallback,
  type PlaybackErrorCallback,
  type ReadyCallback,
  type StatusCallback,
} from '../playback/player.js';
import { PluginDirection, type BagPluginInterface } from '../plugins/bag-plugin.js';
import { yieldToEventLoop } from '../util/schedule.js';
import { SyncCursor } from './cursor.js';
import { toCursorQuery, type CursorConfig } from './cursor-config.js';
import { checkReaderOptions } from './reader-options-check.js';
import { openFrames } from './frame-stream.js';
import { ReadUrlMap } from './url-map.js';
import { checkCallback, checkPlugin } from '../util/callback-check.js';

export interface FramesOptions extends CursorConfig {
  signal?: AbortSignal;
}

/** How many frames an async iterator hands out before letting the event loop breathe. */
const YIELD_EVERY = 512;

/**
 * Reads a bag; the extension picks the backend, else the content (`detectBackend`: magic bytes, a bag directory). Three ways to read, all with url and time filters: the VLink
 * synchronous cursor (`openCursor` / `readNext`), an async iterator (`frames()`), and paced playback (`play()` with
 * VLink's callbacks and controls, or `for await (const frame of reader.play(config))`; see {@link Player}).
 *
 * A bound read plugin (`bindPluginInterface`) renames and drops urls for every way of reading; its `onRead` runs in
 * playback only. A frame's `data` is a view that is valid until the next read: copy it (`data.slice()`) to keep it.
 */
export class BagReader {
  readonly path: string;
  protected readonly backend: BackendReader;
  private info: Info | undefined;
  private readonly cursor: SyncCursor;
  private lastError: BagError | undefined;
  private closed = false;
  private plugin: BagPluginInterface | undefined;
  private urls: ReadUrlMap | undefined;
  private playerInstance: Player | undefined;

  protected constructor(path: string, backend: BackendReader) {
    this.path = path;
    this.backend = backend;
    this.cursor = new SyncCursor(
      (query) => this.open(query),
      (error) => (this.lastError = error),
      path,
    );
  }

  static async create(path: string, options: ReaderOptions = {}): Promise<BagReader> {
    checkBagPath(path);
    checkReaderOptions(options);
    const resolved: ReaderOptions = {
      readOnly: options.readOnly ?? true,
      tryToFix: options.tryToFix ?? false,
      verifyCrc: options.verifyCrc ?? true,
      ...(options.confineTo === undefined ? {} : { confineTo: options.confineTo }),
    };
    const source = await openByteSource(path);
    if (source) return new this(path, await openSourceReader(path, source, resolved));
    const backend = await detectBackend(path);
    return new this(path, await backend.openReader(path, resolved));
  }

  getInfo(): Info {
    this.ensureOpen();
    // A bag read through a local copy (a url's cache) still names the url it was opened as.
    return (this.info ??= withPath(this.backend.info(), this.path));
  }

  /**
   * The bytes of attachment `index` of `getInfo().attachments` (foreign formats with attachments, e.g. MCAP). Throws
   * `NOT_FOUND` when the bag has no such attachment.
   */
  getAttachment(index: number): Uint8Array {
    this.ensureOpen();
    if (!this.backend.attachment)
      throw new BagError('NOT_FOUND', `this bag has no attachment ${index}`, { file: this.path });
    return this.backend.attachment(index);
  }

  getSchemas(): SchemaData[] {
    this.ensureOpen();
    return this.backend.schemas();
  }

  /**
   * Binds a read plugin (VLink `bind_plugin_interface`); undefined unbinds. `convertUrlMeta` renames or drops urls
   * for cursors and playback (`filterUrls` then name playback urls); `onRead`, `onReset` and `flush` run in playback.
   */
  bindPluginInterface(plugin: BagPluginInterface | undefined): void {
    checkPlugin(plugin);
    this.plugin?.detach();
    this.plugin = plugin;
    this.urls = undefined;
    plugin?.attach(PluginDirection.Read, (frame) => this.player().deliver(frame));
  }

  // --- cursor ------------------------------------------------------------------------------------------------------

  /** (Re)opens the synchronous cursor; clears `eof()` and `fail()`. */
  openCursor(config: CursorConfig = {}): boolean {
    this.ensureOpen();
    return this.cursor.openCursor(config);
  }

  /**
   * Reads the next frame into `frame` (VLink `read_next`); opens a default cursor on first use. Returns false at the
   * end (`eof()`) or on an error (`fail()`, `getLastError()`).
   */
  readNext(frame: Frame): boolean {
    const next = this.next();
    if (!next) return false;
    Object.assign(frame, next);
    return true;
  }

  /** The next frame of the cursor, or undefined at the end or on error. */
  next(): Frame | undefined {
    return this.cursor.next();
  }

  eof(): boolean {
    return this.cursor.eof();
  }

  fail(): boolean {
    return this.cursor.fail();
  }

  /** The last cursor or playback error. */
  getLastError(): BagError | undefined {
    return this.lastError;
  }

  /** Async iterator over frames, unpaced; a separate cursor, independent of `openCursor`. Errors are thrown. */
  async *frames(options: FramesOptions = {}): AsyncGenerator<Frame, void, undefined> {
    this.ensureOpen();
    const query = toCursorQuery(options);
    const { signal } = options;
    // By shape, not instanceof: a signal from another realm or an AbortController polyfill is still one.
    if (signal !== undefined && typeof (signal as { aborted?: unknown } | null)?.aborted !== 'boolean')
      throw new BagError('INVALID_ARGUMENT', 'signal must be an AbortSignal');
    const iterator = this.open(query);
    let sinceYield = 0;
    try {
      for (;;) {
        if (signal?.aborted)
          throw new BagError('ABORTED', 'reading was aborted', { file: this.path, cause: signal.reason });
        const step = iterator.next();
        if (step.done) return;
        yield step.value;
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await yieldToEventLoop();
        }
      }
    } finally {
      iterator.return?.();
    }
  }

  // --- playback (format reference §7.3–7.4; semantics in Player) ----------------------------------------------------------------

  /** Frame callback for playback; a returned promise is awaited before the next frame. */
  registerOutputCallback(callback: OutputCallback | undefined): void {
    this.player().registerOutputCallback(callback);
  }
  /** Status changes (Stopped/Paused/Playing), reported only when the status really changes. */
  registerStatusCallback(callback: StatusCallback | undefined): void {
    this.player().registerStatusCallback(callback);
  }
  /** Fires when a pass is prepared: on every pass and after each jump. */
  registerReadyCallback(callback: ReadyCallback | undefined): void {
    this.player().registerReadyCallback(callback);
  }
  /** Fires when a session ends (not when a jump ends it); true when stopped or interrupted. */
  registerFinishCallback(callback: FinishCallback | undefined): void {
    this.player().registerFinishCallback(callback);
  }
  /** Playback errors (a read failure, a throwing callback); the session then finishes interrupted. */
  registerErrorCallback(callback: PlaybackErrorCallback | undefined): void {
    this.player().registerErrorCallback(callback);
  }
  /** Starts the playback loop (`play()` and `jump()` start it too). */
  asyncRun(): void {
    this.ensureOpen();
    this.player().asyncRun();
  }
  /** Starts paced playback; the returned {@link Playback} can be ignored or iterated with `for await`. */
  play(config: PlayConfig & { signal?: AbortSignal } = {}): Playback {
    this.ensureOpen();
    return this.player().play(config);
  }
  pause(): void {
    this.playerInstance?.pause();
  }
  resume(): void {
    this.playerInstance?.resume();
  }
  /** While paused, emits exactly one frame, then pauses again; false when not paused. */
  pauseToNext(): boolean {
    return this.playerInstance?.pauseToNext() ?? false;
  }
  /** Restarts playback at `beginMs` (clamped); no finish callback for the session it replaces. */
  jump(beginMs: number, rate?: number, times?: number, forceToPlay = false): Promise<void> {
    this.ensureOpen();
    return this.player().jump(beginMs, rate, times, forceToPlay);
  }
  /** Stops the session (finish(true)); resolves when it has ended. Do not await it inside an output callback. */
  stop(): Promise<void> {
    return this.playerInstance?.stop() ?? Promise.resolve();
  }
  getStatus(): PlayStatus {
    return this.player().getStatus();
  }
  /** Playback position in ms, interpolated between frames. */
  getTimestamp(): number {
    return this.playerInstance?.getTimestamp() ?? 0;
  }
  /** The last emitted frame's time in ms while playing or paused, else 0. */
  getRealTimestamp(): number {
    return this.playerInstance?.getRealTimestamp() ?? 0;
  }
  /** Ends the playback loop, interrupting a running session. */
  quit(): void {
    this.playerInstance?.quit();
  }
  /** VLink `is_running`: the playback loop is running (from `asyncRun()`, `play()` or `jump()` until `quit()`). */
  isRunning(): boolean {
    return this.playerInstance?.isRunning() ?? false;
  }
  /** VLink `wait_for_idle`: resolves once no playback session is running or queued (at once when none is). */
  waitForIdle(): Promise<void> {
    return this.playerInstance?.waitForIdle() ?? Promise.resolve();
  }
  /** VLink `is_split_mode`: the bag is a split recording (a `.vdbx`/`.vcapx` manifest and its segments). */
  isSplitMode(): boolean {
    return this.getInfo().format.endsWith('x');
  }
  /**
   * VLink `get_split_index`: the segment (0 for the first) holding the last frame read — by the cursor, `frames()` or
   * playback, whichever read last; 0 before any read and always 0 when the bag is not split.
   */
  getSplitIndex(): number {
    this.ensureOpen();
    return this.backend.splitIndex?.() ?? 0;
  }
  /** Resolves when the playback loop has ended (after `quit()` or `autoQuit`); at once if it is not running. */
  waitForQuit(): Promise<void> {
    return this.playerInstance?.waitForQuit() ?? Promise.resolve();
  }

  // --- maintenance and lifecycle -----------------------------------------------------------------------------------

  /** VLink `check()`: true when the bag passes the full check (`verify()` says what failed). */
  check(): Promise<boolean> {
    const backend = this.backend;
    return this.maintenance(() => backend.check?.() ?? readThroughCheck(backend, false).then((report) => report.ok));
  }

  /**
   * The full check with its findings (beyond VLink): every checksum verified and every payload decoded, the bookkeeping
   * (counts, sizes, durations, manifests) against the data, each problem with its location. `quick`: metadata and
   * structure only. A backend without it answers with `check()` alone.
   */
  async verify(options: CheckOptions = {}): Promise<CheckReport> {
    this.ensureOpen();
    checkCallback('onProgress', options.onProgress);
    const quick = options.quick === true;
    if (this.backend.verify)
      return this.backend.verify(quick || !options.onProgress ? { quick } : { quick, onProgress: options.onProgress });
    if (!this.backend.check) return readThroughCheck(this.backend, quick, options.onProgress);
    const ok = await this.backend.check();
    return {
      ok,
      path: this.path,
      quick,
      frames: this.getInfo().messageCount,
      problems: ok ? [] : [{ file: this.path, message: 'check failed' }],
      moreProblems: 0,
    };
  }

  /**
   * VLink `reindex()`: rebuilds the indexes (`.vdb`: `idx_elapsed_url`; `.vcap`: summary and message indexes). Beyond
   * VLink, `onProgress` follows it (see `ReindexOptions`). Needs `readOnly: false`.
   */
  reindex(options: ReindexOptions = {}): Promise<boolean> {
    this.ensureOpen();
    const backend = this.backend;
    // A format without indexes of ours to rebuild (the foreign ones we only read) says so, rather than "false".
    if (!backend.reindex)
      return Promise.reject(
        new BagError('NOT_SUPPORTED', `reindex is not supported for ${this.getInfo().format} files`, {
          file: this.path,
        }),
      );
    return this.maintenance(() => backend.reindex?.(options.onProgress ? { onProgress: options.onProgress } : {}));
  }

  fix(rebuild = false): Promise<boolean> {
    return this.maintenance(() => this.backend.fix?.(rebuild));
  }

  /** Ends playback and closes the file; idempotent. */
  close(): void {
    if (this.closed) return;
    this.playerInstance?.quit();
    this.closed = true;
    this.cursor.close();
    this.plugin?.detach();
    this.backend.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
  }

  private player(): Player {
    return (this.playerInstance ??= new Player(this.playbackSource(), (error) => (this.lastError = error)));
  }

  private playbackSource(): PlaybackSource {
    return {
      durations: () => {
        const info = this.getInfo();
        return { totalMs: info.totalDuration, blankMs: info.blankDuration };
      },
      open: ({ beginUs, endUs, filterUrls, timeBase }) => {
        this.ensureOpen();
        const query: CursorQuery = {};
        if (timeBase === 'publish') query.timeBase = timeBase;
        if (filterUrls.length > 0) query.urls = filterUrls;
        if (beginUs > 0) query.beginUs = beginUs;
        if (endUs > 0) query.endUs = endUs;
        return this.open(query);
      },
      readPlugin: () => this.plugin,
    };
  }

  private open(query: CursorQuery): IterableIterator<Frame> {
    if (this.plugin && !this.urls) this.urls = new ReadUrlMap(this.getInfo().urls, this.plugin);
    return openFrames(this.backend, query, this.urls);
  }

  private async maintenance(run: () => Promise<boolean> | undefined): Promise<boolean> {
    this.ensureOpen();
    const result = run();
    if (result === undefined) return false;
    const ok = await result;
    this.info = undefined;
    this.urls = undefined;
    return ok;
  }

  private ensureOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }
}

function withPath(info: Info, path: string): Info {
  return info.path === path || urlScheme(path) === undefined ? info : { ...info, path };
}
