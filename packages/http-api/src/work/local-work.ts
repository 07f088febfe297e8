import {
  analyzeReport,
  analyzeTiming,
  type BagReader,
  type Frame,
  type FramesOptions,
  type Info,
  type SchemaData,
} from '@vlink/bag';
import { computeDensity } from '../density/density.js';
import { HttpError } from '../http/errors.js';
import { encodeCursor } from '../messages/cursor-token.js';
import { MessageJsonWriter, type MessageJson } from '../messages/frame-json.js';
import { binaryStream, ndjsonStream } from '../messages/frame-stream.js';
import { QueryCursor } from '../messages/query-cursor.js';
import type { BagStore } from '../store/bag-store.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import type {
  BagFacts,
  BagWork,
  DensityRequest,
  PageRequest,
  ReportRequest,
  StreamRequest,
  TimingRequest,
} from './bag-work.js';
import type { WorkLimits } from './limits.js';

/** A JSON page is built in memory: it also ends once it holds this much payload (the `next` token continues). */
export const PAGE_PAYLOAD_BYTES = 8 * 1024 * 1024;
/** Timing keeps one number per message; past this many messages in the window the answer is refused (413). */
export const MAX_TIMING_MESSAGES = 20_000_000;

/**
 * Bag work on the calling thread, through a BagStore (its readers, info and decoder caches). The pool's workers run
 * this; so does the server's own thread for a backend that cannot be loaded in a worker.
 */
export class LocalBagWork implements BagWork {
  constructor(
    private readonly store: BagStore,
    private readonly limits: WorkLimits,
    /** Bytes a stream reads ahead of its consumer (see `FrameStreamOptions.highWaterBytes`). */
    private readonly streamReadAhead?: number,
  ) {}

  info(bag: ResolvedBag): Promise<Info> {
    return this.store.info(bag);
  }

  schemas(bag: ResolvedBag): Promise<SchemaData[]> {
    return this.store.schemas(bag);
  }

  /**
   * One bag after the other. In a worker, `budgetMs` ends the job once that much time has passed (after at least one
   * bag), so a batch never holds a worker for long while other clients' jobs wait; the caller asks for the rest.
   */
  async facts(
    bags: readonly ResolvedBag[],
    options: { budgetMs?: number; signal?: AbortSignal; onBag?: (index: number) => void } = {},
  ): Promise<BagFacts[]> {
    const started = performance.now();
    const budget = options.budgetMs ?? Number.POSITIVE_INFINITY;
    const out: BagFacts[] = [];
    for (const bag of bags) {
      if (out.length > 0 && (options.signal?.aborted || performance.now() - started > budget)) break;
      options.onBag?.(out.length);
      try {
        out.push(await this.store.facts(bag));
      } catch (error) {
        out.push({ error: error instanceof Error ? error : new Error(String(error)) });
      }
    }
    return out;
  }

  attachment(bag: ResolvedBag, index: number): Promise<Uint8Array> {
    return this.store.withReader(bag, (reader) => reader.getAttachment(index));
  }

  async timing(bag: ResolvedBag, request: TimingRequest, signal?: AbortSignal): Promise<string> {
    const { factor, urls } = request;
    const timing = await this.store.withReader(bag, (reader) =>
      analyzeTiming(countedSource(reader, MAX_TIMING_MESSAGES), {
        factor,
        ...(urls ? { filterUrls: urls } : {}),
        ...(signal ? { signal } : {}),
      }),
    );
    return this.json('timing', { factor, urls: timing });
  }

  async report(bag: ResolvedBag, request: ReportRequest, signal?: AbortSignal): Promise<string> {
    const report = await this.store.withReader(bag, (reader) =>
      analyzeReport(
        { getInfo: () => reader.getInfo(), frames: countedSource(reader, MAX_TIMING_MESSAGES).frames },
        { ...request, ...(signal ? { signal } : {}) },
      ),
    );
    return this.json('report', { ...report, path: bag.id });
  }

  async density(bag: ResolvedBag, request: DensityRequest, signal?: AbortSignal): Promise<string> {
    const maxUrls = Math.max(1, Math.floor(this.limits.maxDensityCells / request.buckets));
    const density = await this.store.withReader(bag, (reader) =>
      computeDensity(reader, { ...request, maxUrls, ...(signal ? { signal } : {}) }),
    );
    return this.json('density', density);
  }

  async page(bag: ResolvedBag, request: PageRequest, signal?: AbortSignal): Promise<string> {
    const json = new MessageJsonWriter(request.decode ? await this.store.decoder(bag, request.jsonNames) : undefined);
    const lease = await this.store.lease(bag);
    let cursor: QueryCursor;
    try {
      cursor = new QueryCursor(lease.reader, request.query, request.position, signal);
    } catch (error) {
      lease.release();
      throw error;
    }
    try {
      const messages: MessageJson[] = [];
      let bytes = 0;
      let exhausted = false;
      while (messages.length < request.limit && bytes < PAGE_PAYLOAD_BYTES) {
        const frame = await cursor.next();
        if (!frame) {
          exhausted = true;
          break;
        }
        bytes += frame.data.length;
        messages.push(json.object(frame));
      }
      const more = !exhausted && (await cursor.hasMore());
      const next = more ? encodeCursor(bag.id, request.query, cursor.position()) : null;
      return this.json('page', { messages, next });
    } finally {
      await cursor.close().catch(() => undefined);
      lease.release();
    }
  }

  async stream(bag: ResolvedBag, request: StreamRequest): Promise<ReadableStream<Uint8Array>> {
    const json =
      request.format === 'ndjson'
        ? new MessageJsonWriter(request.decode ? await this.store.decoder(bag, request.jsonNames) : undefined)
        : undefined;
    const lease = await this.store.lease(bag);
    let cursor: QueryCursor;
    try {
      cursor = new QueryCursor(lease.reader, request.query, request.position);
    } catch (error) {
      lease.release();
      throw error;
    }
    const options = {
      lease,
      cursor,
      ...(request.limit === undefined ? {} : { limit: request.limit }),
      ...(this.streamReadAhead === undefined ? {} : { highWaterBytes: this.streamReadAhead }),
    };
    return json ? ndjsonStream(options, json) : binaryStream(options);
  }

  async close(): Promise<void> {
    this.store.close();
  }

  /** Serialises an answer, refusing one over the response limit (it is already built; it is not sent). */
  private json(what: string, value: unknown): string {
    const text = JSON.stringify(value);
    const max = this.limits.maxResponseBytes;
    // UTF-16 length ≤ UTF-8 bytes ≤ 3 × length: the bytes are counted only near the limit.
    if (text.length > max || (text.length * 3 > max && new TextEncoder().encode(text).length > max))
      throw new HttpError(
        'TOO_LARGE',
        `the ${what} answer is over the ${this.limits.maxResponseBytes / (1024 * 1024)} MiB response limit; ask for fewer urls or a shorter window`,
      );
    return text;
  }
}

/** A reader whose `frames()` stops with 413 once more than `max` frames were read (timing keeps them all). */
function countedSource(reader: BagReader, max: number): { frames(options?: FramesOptions): AsyncIterable<Frame> } {
  return {
    async *frames(options: FramesOptions = {}) {
      let n = 0;
      for await (const frame of reader.frames(options)) {
        if (++n > max)
          throw new HttpError(
            'TOO_LARGE',
            `timing keeps every timestamp in memory and the window has more than ${max} messages; ask for fewer urls`,
          );
        yield frame;
      }
    },
  };
}
