import { type MessageDefinition, parseMessageDefinition } from '@foxglove/ulog';
import { BagError } from '@vlink/bag-core';
import type { Readable } from '@vlink/bag-mcap';
import { corrupt } from '../common/errors.js';
import { UlogCursor } from './ulog-cursor.js';
import { type SampleLayout, sampleLayout } from './ulog-layout.js';
import { decodeKeyValue, jsonValue } from './ulog-values.js';

const MAGIC = [0x55, 0x4c, 0x6f, 0x67, 0x01, 0x12, 0x35];
const HEADER = 16;
/** Incompatible flag bit 0 of byte 0: data appended at the offsets of the flag bits message. Any other bit: refuse. */
const DATA_APPENDED = 1;

/** A logged topic instance (`A` message) and what reading its samples needs. */
export interface UlogSubscription extends SampleLayout {
  msgId: number;
  multiId: number;
  name: string;
  url: string;
  count: number;
  size: number;
}

/** Where a ULog's data section goes wrong (reading up to it needs `tryToFix`). */
export interface UlogProblem {
  offset: number;
  message: string;
}

const char = (c: string) => c.charCodeAt(0);
export const T = {
  Flags: char('B'),
  Format: char('F'),
  Info: char('I'),
  InfoMultiple: char('M'),
  Parameter: char('P'),
  ParameterDefault: char('Q'),
  AddLogged: char('A'),
  RemoveLogged: char('R'),
  Data: char('D'),
  Logging: char('L'),
  LoggingTagged: char('C'),
  Sync: char('S'),
  Dropout: char('O'),
};

/**
 * The message types that start the data section. Not "anything but a definition": the format says to skip message
 * types a reader does not know, and pyulog keeps reading definitions past one, so a newer logger's extra
 * definition-section message must not cut the formats that follow it off (the log would be refused as damaged).
 */
const DATA_TYPES = new Set([T.AddLogged, T.RemoveLogged, T.Data, T.Logging, T.LoggingTagged, T.Sync, T.Dropout]);
const DEFINITION_TYPES = new Set([T.Flags, T.Format, T.Info, T.InfoMultiple, T.Parameter, T.ParameterDefault]);

/**
 * A PX4 ULog (docs.px4.io, "ULog File Format"): header, definitions section (formats, info, parameters), and a scan of
 * the data section at open for what Info needs (subscriptions, counts, times) — ULog has no index. Parsing the
 * format strings and type sizes is `@foxglove/ulog`'s; the framing is read here, synchronously.
 */
export class UlogFile {
  readonly version: number;
  readonly headerTimestamp: number;
  readonly compatFlags = new Uint8Array(8);
  readonly incompatFlags = new Uint8Array(8);
  readonly appendedOffsets: number[] = [];
  readonly formats = new Map<string, string>();
  readonly definitions = new Map<string, MessageDefinition>();
  readonly info = new Map<string, string>();
  readonly infoMultiple = new Map<string, unknown[][]>();
  readonly parameters = new Map<string, string>();
  readonly defaultParameters = new Map<number, Map<string, string>>();
  /** One per url (topic instance), in the order they were first subscribed. */
  readonly subscriptions: UlogSubscription[] = [];
  /** The subscription each `A` message (by its file offset) makes current for its message id. */
  readonly subscribedAt = new Map<number, UlogSubscription>();
  readonly dataStart: number;
  /** Counts of the messages that become frames of the synthetic urls. */
  readonly counts = { logging: 0, loggingTagged: 0, dropout: 0, parameter: 0 };
  readonly sizes = { logging: 0, loggingTagged: 0, dropout: 0, parameter: 0 };
  /** Earliest and latest sample or log-message time, µs (since boot). */
  minUs: number | undefined;
  maxUs: number | undefined;
  readonly problems: UlogProblem[] = [];

  constructor(
    readonly path: string,
    private readonly readable: Readable,
  ) {
    if (readable.size() < HEADER) throw corrupt('not a ULog file (shorter than its header)', path, 0);
    const head = readable.read(0, HEADER).slice();
    if (!MAGIC.every((b, i) => head[i] === b)) throw corrupt('not a ULog file (bad magic)', path, 0);
    const view = new DataView(head.buffer);
    this.version = head[7]!;
    this.headerTimestamp = u64(view, 8);
    const cursor = new UlogCursor(readable, HEADER);
    let dataStart = readable.size();
    while (cursor.next()) {
      if (DATA_TYPES.has(cursor.type)) {
        dataStart = cursor.offset;
        break;
      }
      if (DEFINITION_TYPES.has(cursor.type)) this.definition(cursor);
    }
    if (cursor.truncatedAt !== undefined)
      throw corrupt('the definitions section is truncated', path, cursor.truncatedAt);
    this.skippedDamage(cursor);
    for (const [name, format] of this.formats) {
      const definition = parseMessageDefinition(format);
      if (!definition) throw corrupt(`bad format definition for ${name}: ${format}`, path);
      this.definitions.set(name, definition);
    }
    this.dataStart = dataStart;
    this.scanData();
    // In file order, whichever walk found them: the first one is where the damage starts.
    this.problems.sort((a, b) => a.offset - b.offset);
  }

  /** A cursor over the data section (appended data followed). */
  dataCursor(): UlogCursor {
    return new UlogCursor(this.readable, this.dataStart, this.appendedOffsets);
  }

  /** The format text of `name` and of every nested type it uses, one `name:fields` per line. */
  formatText(name: string): string {
    const seen = new Set<string>();
    const lines: string[] = [];
    const visit = (type: string) => {
      if (seen.has(type)) return;
      seen.add(type);
      const format = this.formats.get(type);
      if (format === undefined) return;
      lines.push(format);
      for (const field of this.definitions.get(type)?.fields ?? []) if (field.isComplex) visit(field.type);
    };
    visit(name);
    return lines.join('\n');
  }

  private definition(c: UlogCursor): void {
    const body = c.buf.subarray(c.start, c.end);
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    if (c.type === T.Flags) {
      if (body.length < 40) throw corrupt('flag bits message is too short', this.path, c.offset);
      this.compatFlags.set(body.subarray(0, 8));
      this.incompatFlags.set(body.subarray(8, 16));
      const unknown = this.incompatFlags.some((b, i) => (i === 0 ? b & ~DATA_APPENDED : b) !== 0);
      if (unknown)
        throw new BagError('UNSUPPORTED_FORMAT', 'ULog with unknown incompatible flags (a newer format)', {
          file: this.path,
        });
      if (this.incompatFlags[0]! & DATA_APPENDED)
        for (let i = 0; i < 3; i++) {
          const offset = u64(view, 16 + i * 8);
          if (offset > 0) this.appendedOffsets.push(offset);
        }
    } else if (c.type === T.Format) {
      const text = new TextDecoder().decode(body);
      this.formats.set(text.slice(0, text.indexOf(':')), text);
    } else this.keyValue(c.type, body, c.offset);
  }

  /**
   * Info, info multiple, parameter and default-parameter messages (also allowed in the data section). One whose key
   * runs past its message is left out and reported where it is (the rest of the file reads on).
   */
  private keyValue(type: number, body: Uint8Array, offset: number): void {
    const shift = type === T.InfoMultiple ? 1 : type === T.ParameterDefault ? 1 : 0;
    let kv: ReturnType<typeof decodeKeyValue>;
    try {
      kv = decodeKeyValue(body.subarray(shift));
    } catch (error) {
      this.problem(offset, `${String.fromCharCode(type)} message left out: ${(error as Error).message}`);
      return;
    }
    if (type === T.Info) this.info.set(kv.key, kv.value);
    else if (type === T.Parameter) this.parameters.set(kv.key, kv.value);
    else if (type === T.InfoMultiple) {
      const lists = this.infoMultiple.get(kv.key) ?? [];
      if (body[0] && lists.length > 0) lists[lists.length - 1]!.push(jsonValue(kv));
      else lists.push([jsonValue(kv)]);
      this.infoMultiple.set(kv.key, lists);
    } else if (type === T.ParameterDefault) {
      for (let bit = 0; bit < 8; bit++) {
        if (!(body[0]! & (1 << bit))) continue;
        const values = this.defaultParameters.get(bit) ?? new Map<string, string>();
        values.set(kv.key, kv.value);
        this.defaultParameters.set(bit, values);
      }
    }
  }

  private scanData(): void {
    const c = this.dataCursor();
    const seen = (us: number) => {
      if (this.minUs === undefined || us < this.minUs) this.minUs = us;
      if (this.maxUs === undefined || us > this.maxUs) this.maxUs = us;
    };
    // Message id -> subscription as of the current message: an id subscribed again (to another topic) maps anew.
    const current = new Map<number, UlogSubscription>();
    while (c.next()) {
      const length = c.end - c.start;
      switch (c.type) {
        case T.AddLogged: {
          const sub = this.subscribe(c);
          if (sub) current.set(c.view.getUint16(c.start + 1, true), sub);
          break;
        }
        case T.Data: {
          const sub = length >= 2 ? current.get(c.view.getUint16(c.start, true)) : undefined;
          if (!sub) this.problem(c.offset, 'data message of an unknown subscription');
          else if (!fitsLayout(sub, length - 2))
            this.problem(c.offset, `${sub.name} sample of ${length - 2} bytes, its format has ${sub.minSize}`);
          else {
            sub.count++;
            sub.size += length - 2;
            seen(u64(c.view, c.start + 2 + sub.timestampOffset));
          }
          break;
        }
        case T.Logging:
        case T.LoggingTagged: {
          const tagged = c.type === T.LoggingTagged;
          const at = tagged ? 3 : 1;
          if (length < at + 8) {
            this.problem(c.offset, 'logging message too short');
            break;
          }
          seen(u64(c.view, c.start + at));
          this.counts[tagged ? 'loggingTagged' : 'logging']++;
          this.sizes[tagged ? 'loggingTagged' : 'logging'] += length;
          break;
        }
        case T.Dropout:
          this.counts.dropout++;
          this.sizes.dropout += length;
          break;
        case T.Parameter:
          this.counts.parameter++;
          this.sizes.parameter += length;
          break;
        case T.Info:
        case T.InfoMultiple:
        case T.ParameterDefault:
          this.keyValue(c.type, c.buf.subarray(c.start, c.end), c.offset);
          break;
        default:
          break; // S, R and unknown types carry no data (the format says to skip unknown types)
      }
    }
    this.skippedDamage(c);
    if (c.truncatedAt !== undefined) this.problem(c.truncatedAt, 'the file ends in the middle of a message');
  }

  /** What the cursor stepped over is a problem each: nothing is dropped without saying where and how much. */
  private skippedDamage(c: UlogCursor): void {
    for (const { from, to } of c.skipped)
      this.problem(from, `${to - from} damaged bytes skipped (messages resume at ${to})`);
  }

  private subscribe(c: UlogCursor): UlogSubscription | undefined {
    if (c.end - c.start < 4) {
      this.problem(c.offset, 'subscription message too short');
      return undefined;
    }
    const multiId = c.buf[c.start]!;
    const msgId = c.view.getUint16(c.start + 1, true);
    const name = new TextDecoder().decode(c.buf.subarray(c.start + 3, c.end));
    const definition = this.definitions.get(name);
    if (!definition) {
      this.problem(c.offset, `subscription to ${name}, which has no format`);
      return undefined;
    }
    let layout: SampleLayout | undefined;
    try {
      layout = sampleLayout(definition, this.definitions);
    } catch (error) {
      this.problem(c.offset, `format of ${name}: ${(error as Error).message}`);
      return undefined;
    }
    if (!layout) {
      this.problem(c.offset, `format of ${name} has no uint64_t timestamp`);
      return undefined;
    }
    // A message id reused for another topic (after an `R`) is a new subscription; the same topic instance again
    // is the same url (its samples counted together), so no url is listed twice.
    const url = multiId === 0 ? name : `${name}[${multiId}]`;
    let sub = this.subscriptions.find((s) => s.url === url);
    if (!sub) {
      sub = { msgId, multiId, name, url, ...layout, count: 0, size: 0 };
      this.subscriptions.push(sub);
    }
    this.subscribedAt.set(c.offset, sub);
    return sub;
  }

  private problem(offset: number, message: string): void {
    this.problems.push({ offset, message });
  }
}

/** Whether a sample of `size` bytes is one of `sub`'s (else it is damage, skipped and reported at open). */
export function fitsLayout(sub: SampleLayout, size: number): boolean {
  return size >= sub.minSize && size <= sub.maxSize;
}

/** A little-endian uint64 as a number: exact below 2^53 (µs since boot: 285 years). */
export function u64(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * 0x1_0000_0000;
}
