import type { Frame } from '../model/frame.js';
import type { SchemaForwarder } from './schema-forwarder.js';
import type { SourceQueue, SourceQueues } from './source-queues.js';

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

  /** The frame's url entry; a url's first frame, or a new (ser, family) pair of it, forwards the schemas first. */
  of(frame: Frame): UrlEntry {
    let entry = this.last;
    if (entry === undefined || entry.url !== frame.url) entry = this.byUrl.get(frame.url);
    if (entry === undefined || entry.serType !== frame.serType || entry.schemaType !== frame.schemaType)
      entry = this.enter(frame, entry);
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
