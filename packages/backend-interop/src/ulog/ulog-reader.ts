import {
  type CursorQuery,
  type Frame,
  type InfoMetadata,
  type ReaderOptions,
  type SchemaData,
  SchemaType,
  problemsRecord,
} from '@vlink/bag-core';
import { FileReadable } from '@vlink/bag-mcap';
import { damaged } from '../common/errors.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader } from '../common/reader-base.js';
import { inWindow, TimeBase } from '../common/time-base.js';
import { fitsLayout, T, u64, UlogFile, type UlogSubscription } from './ulog-file.js';
import { closingOnError, reusableFrame } from '../common/reader-helpers.js';

/** Urls of the ULog messages that are not topic samples (uORB topic names never contain a `/`). */
export const ULOG_URLS = {
  logging: 'ulog/logging',
  loggingTagged: 'ulog/logging_tagged',
  dropout: 'ulog/dropout',
  parameter: 'ulog/parameter',
} as const;

/**
 * A PX4 ULog through the Backend seam. Each logged topic instance is a url (`name`, `name[N]` for multi id N > 0)
 * whose frames are its samples (`D` payloads without the message id: the fields in format order, trailing padding
 * left out as the logger writes them), ser = format name, encoding `ulog`, schema = the format text (with nested
 * formats). Logging messages, dropouts and parameter changes are frames of `ulog/…` urls with their raw bodies.
 * Times are the samples' `timestamp` field, µs since boot: the "epoch" of a ULog recording is the boot.
 * Info, info multiple, parameters and default parameters are `Info.metadata`.
 */
export class UlogReader extends ForeignReader {
  private readonly base: TimeBase;

  private constructor(
    path: string,
    private readonly file: UlogFile,
    private readonly readable: FileReadable,
  ) {
    const startUs = Math.min(file.headerTimestamp, file.minUs ?? file.headerTimestamp);
    const base = new TimeBase(Math.floor(startUs / 1000));
    const urls: ForeignUrl[] = [];
    const schemas = new Map<string, SchemaData>();
    for (const sub of [...file.subscriptions].sort((a, b) => a.msgId - b.msgId)) {
      urls.push({
        url: sub.url,
        ser: sub.name,
        schemaType: SchemaType.Unknown,
        encoding: 'ulog',
        count: sub.count,
        size: sub.size,
      });
      if (!schemas.has(sub.name))
        schemas.set(sub.name, {
          name: sub.name,
          encoding: 'ulog',
          schemaType: SchemaType.Unknown,
          data: new TextEncoder().encode(file.formatText(sub.name)),
        });
    }
    for (const kind of Object.keys(ULOG_URLS) as Array<keyof typeof ULOG_URLS>) {
      if (file.counts[kind] > 0)
        urls.push({
          url: ULOG_URLS[kind],
          ser: `ulog.${kind}`,
          schemaType: SchemaType.Unknown,
          encoding: 'ulog',
          count: file.counts[kind],
          size: file.sizes[kind],
        });
    }
    const toNs = (us: number | undefined) => (us === undefined ? undefined : BigInt(us) * 1000n);
    const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
    const metadata: InfoMetadata[] = [
      metadataEntry('ulog.header', {
        version: file.version,
        timestamp_us: file.headerTimestamp,
        compat_flags: hex(file.compatFlags),
        incompat_flags: hex(file.incompatFlags),
        appended_offsets: file.appendedOffsets.join(','),
      }),
      { name: 'ulog.info', values: Object.fromEntries(file.info) },
      {
        name: 'ulog.info_multiple',
        values: Object.fromEntries([...file.infoMultiple].map(([k, v]) => [k, JSON.stringify(v)])),
      },
      { name: 'ulog.parameters', values: Object.fromEntries(file.parameters) },
      ...[...file.defaultParameters].map(([bit, values]) => ({
        name: `ulog.parameters_default.${bit}`,
        values: Object.fromEntries(values),
      })),
    ];
    // Opened with tryToFix despite damage: what was skipped, so nothing is dropped silently.
    metadata.push(
      ...problemsRecord(
        'ulog',
        file.problems.map((p) => `${p.message} at offset ${p.offset}`),
      ),
    );
    const facts = foreignInfo({
      path,
      format: 'ulog',
      version: String(file.version),
      storageType: 'ulog',
      compressionType: 'none',
      base,
      firstNs: toNs(file.minUs),
      lastNs: toNs(file.maxUs),
      hasCompleted: file.problems.length === 0,
      fileSize: readable.size(),
      hasSchema: schemas.size > 0,
      urls,
      metadata,
    });
    super(path, facts, [...schemas.values()]);
    this.base = base;
  }

  static async open(path: string, options: ReaderOptions): Promise<UlogReader> {
    const readable = new FileReadable(path);
    return closingOnError(readable, () => {
      const file = new UlogFile(path, readable);
      const first = file.problems[0];
      if (first && options.tryToFix !== true) {
        const samples = file.subscriptions.reduce((n, s) => n + s.count, 0);
        throw damaged(
          path,
          `damaged ULog: ${first.message} at offset ${first.offset}${file.problems.length > 1 ? ` (and ${file.problems.length - 1} more problems)` : ''}`,
          `the ${samples} intact samples`,
        );
      }
      return new UlogReader(path, file, readable);
    });
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.ensureOpen();
    const wanted = query.urls ? new Set(query.urls) : undefined;
    if (wanted?.size === 0) return;
    const { beginUs, endUs } = query;
    const base = this.base;
    const frame = reusableFrame();
    const want = (url: string) => !wanted || wanted.has(url);
    // Dropouts and parameter changes carry no time: they get the latest sample time before them (pyulog's rule).
    let last = this.file.headerTimestamp;
    const c = this.file.dataCursor();
    // Message id -> subscription, followed through the file as the scan at open did (an id can be subscribed again).
    const current = new Map<number, UlogSubscription>();
    while (c.next()) {
      let us: number;
      let start = c.start;
      switch (c.type) {
        case T.AddLogged: {
          const sub = this.file.subscribedAt.get(c.offset);
          if (sub) current.set(c.view.getUint16(c.start + 1, true), sub);
          continue;
        }
        case T.Data: {
          if (c.end - c.start < 2) continue;
          const sub = current.get(c.view.getUint16(c.start, true));
          if (!sub || !fitsLayout(sub, c.end - c.start - 2)) continue; // reported at open (tryToFix)
          us = u64(c.view, c.start + 2 + sub.timestampOffset);
          if (us > last) last = us;
          if (!want(sub.url)) continue;
          frame.url = sub.url;
          frame.serType = sub.name;
          start += 2;
          break;
        }
        case T.Logging:
        case T.LoggingTagged: {
          const tagged = c.type === T.LoggingTagged;
          if (c.end - c.start < (tagged ? 11 : 9)) continue;
          us = u64(c.view, c.start + (tagged ? 3 : 1));
          frame.url = tagged ? ULOG_URLS.loggingTagged : ULOG_URLS.logging;
          frame.serType = tagged ? 'ulog.loggingTagged' : 'ulog.logging';
          if (!want(frame.url)) continue;
          break;
        }
        case T.Dropout:
        case T.Parameter:
          us = last;
          frame.url = c.type === T.Dropout ? ULOG_URLS.dropout : ULOG_URLS.parameter;
          frame.serType = c.type === T.Dropout ? 'ulog.dropout' : 'ulog.parameter';
          if (!want(frame.url)) continue;
          break;
        default:
          continue;
      }
      const timestamp = base.usFromUs(us);
      if (!inWindow(timestamp, beginUs, endUs)) continue;
      frame.timestamp = timestamp;
      frame.data = c.buf.subarray(start, c.end);
      yield frame;
      if (this.closed) return;
    }
  }

  protected release(): void {
    this.readable.close();
  }
}
