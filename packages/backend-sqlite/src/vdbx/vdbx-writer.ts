import {
  formatVlinkDate,
  schemaTypeLabel,
  type Frame,
  type RecordingContext,
  type ResolvedWriterConfig,
  type SchemaData,
} from '@vlink/bag-core';
import {
  SplitWriter,
  type RecordingUrlIdentity,
  type SegmentStats,
  type SegmentWriter,
  type SplitFiles,
  type SplitFormat,
  type UrlCounters,
} from '@vlink/bag-core/internal';
import type { SqliteDriver } from '../driver/driver.js';
import { compressionEnabled } from '../vdb/compression.js';
import { VdbFileWriter } from '../vdb/file-writer.js';
import { VdbRecording } from '../vdb/recording.js';

export interface VdbxWriterOptions {
  /** Default: `node:fs`. */
  files?: SplitFiles;
  /** Non-fatal problems (an old manifest that does not parse); default `console.warn`. */
  warn?: (message: string) => void;
  /** Monotonic ms clock handed to every segment writer (tests). */
  now?: () => number;
}

/**
 * Opens a `.vdbx` recording (format reference §4): core's `SplitWriter` drives manifest, naming, splits and retention; each
 * segment is a `VdbFileWriter` sharing one `VdbRecording`, so url ids, compression counters and losses are
 * recording-wide and every segment's `VLinkUrls.id` is the global index.
 */
export function createVdbxWriter(
  driver: SqliteDriver,
  path: string,
  config: ResolvedWriterConfig,
  context: RecordingContext,
  options: VdbxWriterOptions = {},
): Promise<SplitWriter> {
  return SplitWriter.create({
    path,
    config,
    context,
    format: new VdbxFormat(driver, config, context, options.now),
    ...(options.files ? { files: options.files } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
  });
}

class VdbxFormat implements SplitFormat {
  readonly flavor = 'vdbx' as const;
  readonly segmentExtension = '.vdb';
  readonly compress: string;
  private readonly recording: VdbRecording;

  constructor(
    private readonly driver: SqliteDriver,
    private readonly config: ResolvedWriterConfig,
    private readonly context: RecordingContext,
    private readonly now: (() => number) | undefined,
  ) {
    this.compress = compressionEnabled(config) ? 'lzav' : 'None';
    this.recording = new VdbRecording(config);
  }

  openSegment(path: string, openedAt: number): SegmentWriter {
    const file = VdbFileWriter.open(this.driver, path, this.config, this.context, this.recording, {
      date: formatVlinkDate(openedAt),
      ...(this.now ? { now: this.now } : {}),
    });
    return new VdbSegment(file, this.config);
  }

  urls(): RecordingUrlIdentity[] {
    const losses = this.recording.losses;
    return [...this.recording.urls.values()].map((u) => ({
      index: u.index,
      url: u.url,
      type: u.type,
      ser: u.ser,
      encoding: schemaTypeLabel(u.schemaType),
      loss: losses.get(u.url) ?? 0,
    }));
  }

  setUrlLoss(url: string, loss: number): void {
    this.recording.setLoss(url, loss);
  }
}

/** One `.vdb` segment as the split writer sees it. */
class VdbSegment implements SegmentWriter {
  readonly path: string;

  constructor(
    private readonly file: VdbFileWriter,
    private readonly config: ResolvedWriterConfig,
  ) {
    this.path = file.path;
  }

  write(frame: Frame, urlId: number): void {
    this.file.write(frame, urlId);
  }

  writeSchema(schema: SchemaData): void {
    this.file.writeSchema(schema);
  }

  commit(): void {
    this.file.commit();
  }

  tick(): void {
    this.file.tick();
  }

  close(): void {
    this.file.close();
  }

  setCounters(table: Record<string, Record<string, number>>): void {
    this.file.setCounters(table);
  }

  urlCount(): number {
    return this.file.urlCount;
  }

  bytes(): number {
    return this.file.bytes;
  }

  overLimit(): boolean {
    return this.file.rows > this.config.maxRowCount || this.file.bytes > this.config.maxBytesSize;
  }

  stats(): SegmentStats {
    const urls = new Map<number, UrlCounters>();
    for (const fu of this.file.state.urls.values()) {
      urls.set(fu.id, { count: fu.count, size: fu.size, firstTs: fu.firstTs, lastTs: fu.lastTs });
    }
    return { rows: this.file.rows, maxTs: this.file.lastTs, ...this.file.readerFacts(), urls };
  }
}
