import {
  type ActionType,
  actionText,
  SchemaType,
  schemaTypeLabel,
  urlKindOf,
  type Frame,
  type RecordingContext,
  type ResolvedWriterConfig,
  type UrlKind,
} from '@vlink/bag-core';
import {
  SplitWriter,
  type RecordingUrlIdentity,
  type SegmentStats,
  type SegmentWriter,
  type SplitFiles,
  type SplitFormat,
  type UrlCounters,
  channelFamily,
  checkStorableNames,
  keptFamily,
  keptSer,
  UrlIdCache,
} from '@vlink/bag-core/internal';
import { loadCodecs, type Codecs } from '../codecs.js';
import { FileWritable } from '../io/file-writable.js';
import { channelAction, VcapFileWriter } from '../vcap/vcap-file-writer.js';
import { writesZstdChunks } from '../vcap/vcap-format.js';
import { McapFileBackendWriter } from '../file-backend-writer.js';

export interface VcapxWriterOptions {
  /** Default: `node:fs`. */
  files?: SplitFiles;
  /** Non-fatal problems (an old manifest that does not parse); default `console.warn`. */
  warn?: (message: string) => void;
}

/**
 * Opens a `.vcapx` recording (format reference §6): core's `SplitWriter` drives manifest, naming, splits and retention; each
 * segment is a `VcapFileWriter` whose channels get their recording-global (url, action) index through `indexFor`.
 */
export async function createVcapxWriter(
  path: string,
  config: ResolvedWriterConfig,
  context: RecordingContext,
  options: VcapxWriterOptions = {},
): Promise<SplitWriter> {
  const codecs = await loadCodecs();
  return SplitWriter.create({
    path,
    config,
    context,
    format: new VcapxFormat(codecs, config, context),
    ...(options.files ? { files: options.files } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
  });
}

/** A (url, action) pair as the whole recording knows it (a manifest `VLinkUrls` entry). */
interface Pair {
  readonly index: number;
  readonly url: string;
  readonly action: ActionType;
  readonly type: UrlKind;
  ser: string;
  family: SchemaType;
  /** The segment (by number) whose channel for this pair has been checked, and the last input checked there. */
  segment: number;
  lastSer: string;
  lastType: SchemaType;
}

class VcapxFormat implements SplitFormat {
  readonly flavor = 'vcapx' as const;
  readonly segmentExtension = '.vcap';
  readonly compress: string;
  private readonly pairs: Pair[] = [];
  private readonly byUrl = new Map<string, Array<Pair | undefined>>();
  /** `byUrl` by the recording's url id: a segment finds a frame's pair without hashing its url. */
  private readonly byUrlId = new UrlIdCache((url) => this.byUrl.get(url));
  private readonly losses = new Map<string, number>();
  private segments = 0;
  private current: VcapSegment | undefined;

  constructor(
    private readonly codecs: Codecs,
    private readonly config: ResolvedWriterConfig,
    private readonly context: RecordingContext,
  ) {
    this.compress = writesZstdChunks(config) ? 'zstd' : 'None';
  }

  openSegment(path: string, openedAt: number): SegmentWriter {
    const writable = new FileWritable(path);
    let writer: VcapFileWriter;
    try {
      writer = new VcapFileWriter({
        writable,
        codecs: this.codecs,
        config: this.config,
        context: this.context,
        file: path,
        openedAt,
        indexFor: (url, action) => this.pairFor(url, action).index,
      });
    } catch (error) {
      writable.close();
      throw error;
    }
    // Each segment writes the losses known so far at its close, as VLink's per-file close does.
    for (const [url, loss] of this.losses) writer.setUrlLoss(url, loss);
    this.current = new VcapSegment(writer, this, ++this.segments);
    return this.current;
  }

  urls(): RecordingUrlIdentity[] {
    return this.pairs.map((p) => ({
      index: p.index,
      url: p.url,
      type: p.type,
      action: actionText(p.action),
      ser: p.ser,
      encoding: schemaTypeLabel(p.family),
      loss: this.losses.get(p.url) ?? 0,
    }));
  }

  setUrlLoss(url: string, loss: number): void {
    this.losses.set(url, loss > 1 || !Number.isFinite(loss) ? -1 : loss);
    this.current?.setUrlLoss(url, loss);
  }

  /** The pair of a frame when its input needs a look (first frame of the pair in this segment, or a new ser/family). */
  lookup(urlId: number, url: string, action: ActionType): Pair | undefined {
    return this.byUrlId.get(urlId, url)?.[action];
  }

  /**
   * Checks a frame against its pair recording-wide (a segment's writer only knows its own channels): a different
   * non-empty ser, or a different known family, is a `SCHEMA_CONFLICT`. The first frame of a pair in a new segment
   * carries the recorded ser when it has none, so that segment's channel names it too. Returns the frame to write.
   */
  check(pair: Pair | undefined, frame: Frame, action: ActionType, segment: number, file: string): Frame {
    const inSer = frame.serType ?? '';
    if (pair === undefined || pair.lastSer !== inSer) checkStorableNames(frame.url, inSer, { file, url: frame.url });
    if (pair === undefined) {
      pair = this.pairFor(frame.url, action);
      pair.ser = inSer;
      pair.family = this.family(inSer, frame.schemaType, action);
      pair.segment = segment;
      pair.lastSer = inSer;
      pair.lastType = frame.schemaType;
      return frame;
    }
    const place = { file, url: frame.url };
    const ser = keptSer(pair.ser, inSer, place);
    pair.family = keptFamily(pair.family, this.family(ser, frame.schemaType, action), place);
    pair.ser = ser;
    let out = frame;
    if (pair.segment !== segment) {
      pair.segment = segment;
      if (!inSer && ser) out = { ...frame, serType: ser };
    }
    pair.lastSer = inSer;
    pair.lastType = frame.schemaType;
    return out;
  }

  private pairFor(url: string, action: ActionType): Pair {
    let slots = this.byUrl.get(url);
    if (!slots) this.byUrl.set(url, (slots = []));
    let pair = slots[action];
    if (!pair) {
      pair = {
        index: this.pairs.length,
        url,
        action,
        type: urlKindOf(action),
        ser: '',
        family: SchemaType.Unknown,
        segment: 0,
        lastSer: '',
        lastType: SchemaType.Unknown,
      };
      slots[action] = pair;
      this.pairs.push(pair);
    }
    return pair;
  }

  /** The family VcapFileWriter resolves for a channel: explicit, else the schema's encoding, else a guess from ser. */
  private family(ser: string, explicit: SchemaType, action: ActionType): SchemaType {
    return channelFamily(ser, explicit, action, (name, family) => this.context.resolveSchema(name, family)).family;
  }
}

/** One `.vcap` segment as the split writer sees it. */
class VcapSegment extends McapFileBackendWriter<VcapFileWriter> implements SegmentWriter {
  readonly path: string;
  private rows = 0;
  private payloadBytes = 0;

  constructor(
    writer: VcapFileWriter,
    private readonly format: VcapxFormat,
    private readonly number: number,
  ) {
    super(writer);
    this.path = writer.file;
  }

  override write = (frame: Frame, urlId: number): void => {
    // The action is normalised once per frame, by the segment's writer: a pair found under the frame's own action
    // that names that action proves it a valid slot; anything else (a new pair, or an action outside the enum) takes
    // the slow path, which normalises it to find the pair.
    const a = frame.actionType;
    let pair = this.format.lookup(urlId, frame.url, a);
    let target = frame;
    if (
      pair === undefined ||
      pair.action !== a ||
      pair.segment !== this.number ||
      pair.lastSer !== frame.serType ||
      pair.lastType !== frame.schemaType
    ) {
      const action = channelAction(a);
      if (action !== a) pair = this.format.lookup(urlId, frame.url, action);
      target = this.format.check(pair, frame, action, this.number, this.path);
    }
    this.writer.write(target, urlId);
    this.rows++;
    this.payloadBytes += frame.data.length;
  };

  /** Channels are never removed from a `.vcap`, so "holds a url" is "holds a message". */
  urlCount(): number {
    return this.rows > 0 ? 1 : 0;
  }

  bytes(): number {
    return this.payloadBytes;
  }

  stats(): SegmentStats {
    const urls = new Map<number, UrlCounters>();
    for (const c of this.writer.channelSummaries())
      urls.set(c.globalIndex, { count: c.count, size: c.size, firstTs: c.firstUs, lastTs: c.lastUs });
    return {
      rows: this.rows,
      maxTs: this.writer.lastTimestamp(),
      minTs: Math.max(0, this.writer.firstTimestamp()),
      hasSchema: this.writer.hasSchema(),
      urls,
    };
  }
}
