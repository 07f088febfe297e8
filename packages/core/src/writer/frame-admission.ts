import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { unstorableNames } from '../model/url-identity.js';
import type { SchemaForwarder } from './schema-forwarder.js';
import type { SourceQueue, SourceQueues } from './source-queues.js';
import type { DropReason } from './writer-stats.js';

/**
 * What every push passes before the queue, in all three modes: the checks that need no queue (a url, a live
 * payload, an open writer), the timestamps the writer fills in (format reference §2.9), and the url's id for the
 * recording, which backends index their per-url state by (`BackendWriter.write`). The checks and times are kept free
 * of the writer's state so the rules read in one place. The url ids live here too, though each engine keeps its own
 * (`UrlIds` on the caller's thread, `UrlEntries` for a worker): they are the last step of a frame's admission, and
 * one file where each frame passes once keeps the frame path short (issue #27: the files a frame passes through).
 */
export interface Refusal {
  reason: DropReason;
  error: BagError;
}

/** Why `frame` cannot be queued at all, or undefined when it can. `closed`: the writer quit or closed. */
export function refusalOf(frame: Frame, file: string, closed: boolean): Refusal | undefined {
  if (closed) return { reason: 'closed', error: new BagError('CLOSED', 'writer is closed', { file }) };
  if (typeof frame !== 'object' || frame === null)
    return {
      reason: 'invalidFrame',
      error: new BagError('INVALID_ARGUMENT', `a frame must be an object, not ${typeOf(frame)}`),
    };
  if (typeof frame.url !== 'string' || frame.url.length === 0)
    return { reason: 'emptyUrl', error: new BagError('INVALID_ARGUMENT', 'frame url must not be empty') };
  const data = frame.data;
  // `length`, not `byteLength`: the same for a Uint8Array, and cheaper on Node 20 (hand-measured: this function took
  // 13–17 ns a call with `byteLength`, 4–8 ns with `length`; 200k `syncMode` .vcap pushes of 64 B, minimum of 40
  // runs in each of three processes, 33.0–34.0 → 31.2–32.2 ms, while 449cd65 took 30.5–30.8).
  if (!(data instanceof Uint8Array) || (data.length === 0 && (data.buffer as { detached?: boolean }).detached)) {
    // A detached buffer (given away earlier with `transferPayloads`) would otherwise pass as an empty payload.
    return invalid(frame, 'frame data must be a Uint8Array (not detached)');
  }
  const ts = frame.timestamp;
  const p = frame.publishTime;
  // What the types promise, checked for callers in plain JavaScript: a string time or a BigInt would otherwise be
  // taken for "now" or "none", a missing serType stored as none here and thrown on in a worker's schema lookup. One
  // small test here, the wording apart: with the messages inline a syncMode push of 64 B took about 15 ns longer
  // (Node 20, 300k-frame loops, three interleaved pairs; V8's inlining budget, not confirmed), this way no longer than
  // before within the noise (six pairs).
  if (!fieldsTyped(frame)) return mistypedField(frame);
  // Past 2^53 µs (285 years) a time is no exact integer: .vdb would store it as a REAL no reader takes, .vcap wrap it.
  // Non-finite times are not refused: they mean "now" (timestamp) and "none" (publishTime).
  const tooLate = ts > Number.MAX_SAFE_INTEGER && ts !== Number.POSITIVE_INFINITY;
  if (tooLate || (p !== undefined && Math.abs(p) > Number.MAX_SAFE_INTEGER && Number.isFinite(p))) {
    const which = tooLate ? 'timestamp' : 'publishTime';
    return {
      reason: 'limit',
      error: new BagError('LIMIT_REACHED', `${which} ${frame[which]} µs is past the largest exact time (2^53 − 1 µs)`, {
        url: frame.url,
      }),
    };
  }
  return undefined;
}

function fieldsTyped(frame: Frame): boolean {
  const { timestamp, publishTime, schemaType, actionType } = frame;
  return (
    typeof frame.serType === 'string' &&
    (typeof timestamp === 'number' || timestamp === undefined) &&
    (typeof publishTime === 'number' || publishTime === undefined) &&
    (typeof schemaType === 'number' || schemaType === undefined) &&
    (typeof actionType === 'number' || actionType === undefined)
  );
}

/** The refusal of a frame `fieldsTyped` refused, naming the first field of the wrong type. */
function mistypedField(frame: Frame): Refusal {
  const { timestamp, publishTime, serType, schemaType, actionType } = frame as unknown as Record<string, unknown>;
  if (typeof timestamp !== 'number' && timestamp !== undefined)
    return invalid(frame, `frame timestamp must be a number (µs), not ${typeOf(timestamp)}`);
  if (typeof publishTime !== 'number' && publishTime !== undefined)
    return invalid(frame, `frame publishTime must be a number (µs), not ${typeOf(publishTime)}`);
  if (typeof serType !== 'string') return invalid(frame, `frame serType must be a string, not ${typeOf(serType)}`);
  // Numbers out of the enums' range are VLink's to map (§2.6 guesses the family, actions clamp); other types are not.
  if (typeof schemaType !== 'number' && schemaType !== undefined)
    return invalid(frame, `frame schemaType must be a number, not ${typeOf(schemaType)}`);
  return invalid(frame, `frame actionType must be a number, not ${typeOf(actionType)}`);
}

function invalid(frame: Frame, message: string): Refusal {
  return { reason: 'invalidFrame', error: new BagError('INVALID_ARGUMENT', message, { url: frame.url }) };
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

/**
 * The frame with its times resolved: a negative or non-finite `timestamp` takes the clock's `nowUs()`, times are floored to whole
 * µs. The frame itself when nothing changes (the common case allocates nothing).
 */
export function withResolvedTimes(frame: Frame, clock: { nowUs(): number }): Frame {
  const timestamp =
    frame.timestamp < 0 || !Number.isFinite(frame.timestamp) ? clock.nowUs() : Math.floor(frame.timestamp);
  // A publish time is floored like the log time; anything but a finite number means "none" (= the log time).
  const p = frame.publishTime;
  const publishTime = p === undefined || !Number.isFinite(p) ? undefined : Math.floor(p);
  if (timestamp === frame.timestamp && publishTime === p) return frame;
  const out = { ...frame, timestamp };
  if (publishTime === undefined) delete out.publishTime;
  else out.publishTime = publishTime;
  return out;
}

// --- url ids ------------------------------------------------------------------------------------------------------

/**
 * The url ids of a same-thread recording (`LocalEngine`): each url gets the next integer the first time it is
 * written, and keeps it for the whole recording, so backends can index their per-url state by it
 * (`BackendWriter.write`). Worker writers need none of this: their frames already carry the interned id of their url
 * (`UrlEntries` below).
 *
 * One map lookup per frame and no last-url shortcut: on a `syncMode` `.vcap` push loop (hand-measured, Node, against
 * the by-url backends before ids) comparing with the last url first cost more than it saved. Producers that interleave
 * urls pay a full string compare (same length, same prefix: `dds://camera/0` vs `dds://camera/1`) before the lookup
 * on every frame, 3–10 % more CPU per frame with 4 urls; with the map alone both 1 and 4 urls stayed within noise.
 */
export class UrlIds {
  private readonly ids = new Map<string, number>();

  /** The id of `url`, assigned now when the url is new. */
  of(url: string): number {
    const id = this.ids.get(url);
    return id !== undefined ? id : this.enter(url);
  }

  private enter(url: string): number {
    const id = this.ids.size;
    this.ids.set(url, id);
    return id;
  }
}

/** What a worker writer's producer knows of a url. */
export interface UrlEntry {
  readonly url: string;
  /** Its interned id: what its frames carry to the worker (never the string). */
  readonly id: number;
  readonly serType: string;
  /** −1 once the schema callback changed: the next push re-checks the pair. */
  schemaType: number;
  /** The interned id of `serType`. */
  readonly ser: number;
  readonly source: SourceQueue;
}

/**
 * The producer side of a worker writer's url identity: each url's interned id (announced to the worker once, in the
 * batch that first carries it), its source queue, and the (ser, family) pair last pushed under it, whose schemas are
 * then known sent. Found per push by one compare when the url is the last one (the same string object, so no hashing:
 * producers mostly push runs of one url), else by one map lookup.
 */
export class UrlEntries {
  private readonly byUrl = new Map<string, UrlEntry>();
  private last: UrlEntry | undefined;
  private readonly internFn = (value: string) => this.intern(value);

  constructor(
    private readonly forwarder: SchemaForwarder,
    private readonly sources: SourceQueues,
    /** Announces a new string to the worker (in the batch being built); ids count up from 0. */
    private readonly announce: (value: string) => void,
  ) {}

  private nextString = 0;
  /** Why `of` last returned undefined. */
  refusal: BagError | undefined;

  /**
   * The frame's url entry; a url's first frame, or a new (ser, family) pair of it, forwards the schemas first. A url
   * or ser UTF-8 cannot store is refused here, on the producer's thread, so that `write()` rejects and `push()`
   * returns -1 for it as in the other modes (the backend in the worker would drop it only once it came to it):
   * undefined, with the reason in `refusal`.
   */
  of(frame: Frame): UrlEntry | undefined {
    let entry = this.last;
    if (entry === undefined || entry.url !== frame.url) entry = this.byUrl.get(frame.url);
    if (entry === undefined || entry.serType !== frame.serType || entry.schemaType !== frame.schemaType) {
      this.refusal = unstorableNames(frame.url, frame.serType, { url: frame.url });
      if (this.refusal) return undefined;
      entry = this.enter(frame, entry);
    }
    this.last = entry;
    return entry;
  }

  /** The schema callback changed: every url passes the forwarder again at its next push. */
  recheckSchemas(): void {
    for (const entry of this.byUrl.values()) entry.schemaType = -1;
  }

  private enter(frame: Frame, known: UrlEntry | undefined): UrlEntry {
    const ser = this.forwarder.serId(frame.serType, this.internFn);
    this.forwarder.ensure(ser, frame);
    const entry: UrlEntry = {
      url: frame.url,
      id: known ? known.id : this.intern(frame.url),
      serType: frame.serType,
      schemaType: frame.schemaType,
      ser,
      source: known ? known.source : this.sources.of(frame.url),
    };
    this.byUrl.set(frame.url, entry);
    return entry;
  }

  private intern(value: string): number {
    this.announce(value);
    return this.nextString++;
  }
}
