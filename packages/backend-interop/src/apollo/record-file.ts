import { BagError } from '@vlink/bag-core';
import { equalBytes } from '@vlink/bag-core/internal';
import { crc32, type Readable } from '@vlink/bag-mcap';
import { asCorrupt, corrupt } from '../common/errors.js';
import { SkippedParts } from '../common/skipped-parts.js';
import { type BodyMessage, bodyMismatch, type SkippedBody, skippedLines } from './chunk-check.js';
import {
  type ChannelCache,
  type ChunkHeaderCache,
  decodeChannel,
  decodeChunkHeader,
  decodeHeader,
  decodeIndex,
  eachSingleMessage,
  type RecordHeader,
  SectionType,
} from './record-proto.js';

/** `struct Section { int32 type; (4 bytes padding) int64 size; }`, then `size` bytes of one protobuf message. */
const SECTION = 16;
/** The header section's message is padded to this many bytes. */
const HEADER_LENGTH = 2048;
/** Sections larger than this are refused rather than allocated (a damaged size field). */
const MAX_SECTION = 1 << 30;

/** One chunk: its header (times, count) and where its body section starts. */
export interface RecordChunk extends ChunkHeaderCache {
  body: number;
}

/**
 * The layout of an Apollo Cyber RT `.record` (a header section padded to 2048 bytes, then channel, chunk header and
 * chunk body sections, and an index section at `index_position`): from the index when the record was closed, else
 * (`tryToFix`) by walking the sections, which stops at the first truncated one.
 */
export class RecordFile {
  readonly header: RecordHeader;
  readonly channels: ChannelCache[];
  readonly chunks: RecordChunk[];
  /** How the layout was found; `scan` means the record was not closed or its index is damaged. */
  readonly mode: 'indexed' | 'scan';
  readonly problem: string | undefined;

  constructor(
    readonly path: string,
    private readonly readable: Readable,
    tryToFix: boolean,
  ) {
    const first = this.section(0);
    if (first.type !== SectionType.Header || first.size > HEADER_LENGTH)
      throw corrupt('not an Apollo record (no header section)', path, 0);
    try {
      this.header = decodeHeader(first.bytes);
    } catch (error) {
      throw asCorrupt(error, 'bad record header', path, 0);
    }
    let problem: string | undefined;
    let index: ReturnType<typeof decodeIndex> | undefined;
    let trailing = 0;
    const at = Number(this.header.indexPosition);
    if (!this.header.isComplete) problem = 'the record was not closed (is_complete is false)';
    else if (at < SECTION + HEADER_LENGTH || at >= readable.size())
      problem = `index position ${at} is outside the file`;
    else {
      try {
        const section = this.section(at);
        if (section.type !== SectionType.Index)
          throw new RangeError(`section at the index position has type ${section.type}`);
        index = decodeIndex(section.bytes);
        if (index.chunkHeaders.length !== index.chunkBodies.length)
          throw new RangeError(`${index.chunkHeaders.length} chunk headers but ${index.chunkBodies.length} bodies`);
        // Two entries of one body (one copied over another's) would read that chunk twice and another never.
        if (new Set(index.chunkBodies).size !== index.chunkBodies.length)
          throw new RangeError('two entries name the same chunk body');
        // The index is the last section a writer writes: bytes after it (another record appended?) are not read.
        trailing = readable.size() - section.end;
      } catch (error) {
        problem = `bad index section (${(error as Error).message})`;
        index = undefined;
      }
    }
    if (index && trailing > 0) {
      problem = `${trailing} bytes follow the index section, which no reader of the format reads (another file appended to it?)`;
      if (!tryToFix)
        throw new BagError('CORRUPT_FILE', `${problem}; open with tryToFix to read the record`, { file: path });
    }
    if (index) {
      this.mode = 'indexed';
      this.channels = index.channels;
      const chunks = index.chunkHeaders.map((h, i) => ({ ...h, body: index.chunkBodies[i]! }));
      const unread = tryToFix ? this.unreadable(chunks) : undefined;
      this.chunks = unread ? chunks.filter((c) => !unread.chunks.has(c)) : chunks;
      if (unread) problem = problem === undefined ? unread.line : `${problem}; ${unread.line}`;
    } else {
      if (!tryToFix)
        throw new BagError('CORRUPT_FILE', `${problem}; open with tryToFix to read the intact chunks`, { file: path });
      this.mode = 'scan';
      const scanned = this.scan();
      ({ channels: this.channels, chunks: this.chunks } = scanned);
      // What the scan could not read, so that nothing is dropped without saying how much.
      problem = [problem, ...scanned.lost].join('; ');
    }
    this.problem = problem;
    // cyber_record and Apollo's reader play chunks by begin time; ties keep file order.
    this.chunks.sort((a, b) =>
      a.beginTime < b.beginTime ? -1 : a.beginTime > b.beginTime ? 1 : a.position - b.position,
    );
  }

  /**
   * With `tryToFix`, the chunks of an indexed record are read once at open: a body that does not decode, or is not
   * the chunk its header describes, is left out and named, where a read would stop at it (found by hand: a body
   * overwritten by another made `clone --try-to-fix` copy nothing, which `check` pointed users to). Costs a read of
   * the file at open. Undefined when every chunk reads.
   */
  private unreadable(chunks: readonly RecordChunk[]): { chunks: Set<RecordChunk>; line: string } | undefined {
    const bad = new Set<RecordChunk>();
    const skipped = new SkippedParts('chunk(s) that do not read');
    let messages = 0;
    for (const chunk of chunks) {
      try {
        this.readChunk(chunk);
      } catch (error) {
        skipped.add(error, chunk.body);
        bad.add(chunk);
        messages += chunk.messageNumber;
      }
    }
    const line = skipped.line(`${messages} messages, as their chunk headers count them`);
    if (line === undefined) return undefined;
    return { chunks: bad, line };
  }

  /**
   * The messages of a chunk, in body order, once the body has been checked against its chunk header (`CORRUPT_FILE`
   * when it is another chunk's; see chunk-check.ts).
   */
  readChunk(chunk: RecordChunk): BodyMessage[] {
    const messages = this.bodyMessages(this.section(chunk.body), chunk.body);
    const mismatch = bodyMismatch(chunk, messages);
    if (mismatch)
      throw corrupt(`chunk body is not the one its chunk header describes: ${mismatch}`, this.path, chunk.body);
    return messages;
  }

  private bodyMessages(section: { type: number; bytes: Uint8Array }, at: number): BodyMessage[] {
    if (section.type !== SectionType.ChunkBody) throw corrupt(`section at ${at} is not a chunk body`, this.path, at);
    const messages: BodyMessage[] = [];
    try {
      eachSingleMessage(section.bytes, (channel, time, content) => messages.push({ channel, time, content }));
    } catch (error) {
      throw asCorrupt(error, 'bad chunk body', this.path, at);
    }
    return messages;
  }

  private section(at: number): { type: number; size: number; bytes: Uint8Array; end: number } {
    const fileSize = this.readable.size();
    if (at + SECTION > fileSize) throw corrupt('section header runs past the end of the file', this.path, at);
    const head = this.readable.read(at, SECTION);
    const view = new DataView(head.buffer, head.byteOffset, SECTION);
    const type = view.getInt32(0, true);
    const size = Number(view.getBigInt64(8, true));
    if (size < 0 || size > MAX_SECTION || at + SECTION + size > fileSize)
      throw corrupt(`section of ${size} bytes runs past the end of the file`, this.path, at);
    const bytes = this.readable.read(at + SECTION, size).slice();
    return { type, size, bytes, end: at + SECTION + (type === SectionType.Header ? HEADER_LENGTH : size) };
  }

  /**
   * Channels and chunks from the sections themselves, up to the first one whose framing does not hold (one whose
   * content does not decode is skipped); `lost` says what was not read: the sections skipped, the bytes from the
   * first broken framing on, and the messages of channels that have no channel section.
   */
  private scan(): { channels: ChannelCache[]; chunks: RecordChunk[]; lost: string[] } {
    const channels = new Map<string, ChannelCache>();
    const chunks: RecordChunk[] = [];
    const byBody = new Map<string, RecordChunk[]>();
    const skipped: SkippedBody[] = [];
    const lost: string[] = [];
    let orphans = 0;
    let pending: ChunkHeaderCache | undefined;
    // Sections whose framing holds but whose content does not decode: skipped, and the scan goes on after them
    // (before, the first one ended the scan and every chunk after it was lost).
    const undecoded = new SkippedParts('section(s) that do not decode');
    for (let at = SECTION + HEADER_LENGTH; at < this.readable.size(); ) {
      let section: ReturnType<RecordFile['section']>;
      try {
        section = this.section(at);
      } catch (error) {
        // Truncated or damaged: everything before it is kept.
        const rest = this.readable.size() - at;
        lost.push(`the sections end at offset ${at}: ${(error as Error).message} (${rest} bytes not read)`);
        break;
      }
      try {
        if (section.type === SectionType.Channel) {
          const c = decodeChannel(section.bytes, false);
          if (!channels.has(c.name)) channels.set(c.name, c);
        } else if (section.type === SectionType.ChunkHeader) pending = decodeChunkHeader(section.bytes, at, false);
        else if (section.type === SectionType.ChunkBody) {
          const header = pending;
          pending = undefined;
          const messages = this.bodyMessages(section, at);
          const problem: Omit<SkippedBody, 'at' | 'messages'> | undefined = header
            ? this.scannedBodyProblem(header, messages, section.bytes, byBody)
            : { kind: 'headless', detail: 'has no chunk header before it' };
          if (problem) skipped.push({ ...problem, at, messages: messages.length });
          else if (header) {
            for (const m of messages) {
              const c = channels.get(m.channel);
              if (c) c.messageNumber++;
              else orphans++; // readChunk skips them: no type to give them
            }
            const chunk = { ...header, body: at };
            chunks.push(chunk);
            const key = bodyKey(header, section.bytes);
            const alike = byBody.get(key);
            if (alike) alike.push(chunk);
            else byBody.set(key, [chunk]);
          }
        }
      } catch (error) {
        const why = asCorrupt(error, `section of type ${section.type} does not decode`, this.path, at);
        undecoded.add(why, at);
      }
      at = section.end;
    }
    const undecodedLine = undecoded.line();
    if (undecodedLine !== undefined) lost.push(undecodedLine);
    if (orphans > 0) lost.push(`${orphans} messages of channels without a channel section skipped`);
    return { channels: [...channels.values()], chunks, lost: [...skippedLines(skipped), ...lost] };
  }

  /**
   * Why a body found by the scan is left out: it is not the chunk its header describes, or it repeats an earlier
   * chunk byte for byte (a header and body copied whole over later ones, which the header check cannot see).
   */
  private scannedBodyProblem(
    header: ChunkHeaderCache,
    messages: readonly BodyMessage[],
    bytes: Uint8Array,
    earlier: Map<string, RecordChunk[]>,
  ): Omit<SkippedBody, 'at' | 'messages'> | undefined {
    const mismatch = bodyMismatch(header, messages);
    if (mismatch) return { kind: 'mismatch', detail: `is not the one its chunk header describes (${mismatch})` };
    const alike = earlier.get(bodyKey(header, bytes));
    for (const c of alike ?? [])
      if (equalBytes(this.section(c.body).bytes, bytes))
        return { kind: 'repeat', detail: `repeats the chunk body at offset ${c.body}` };
    return undefined;
  }
}

/**
 * What two chunks that are one chunk share: the header's count and times, and the body's length and CRC. Earlier
 * chunks are looked up by it, so the scan stays linear in the chunks: a hostile record of many tiny chunks with one
 * header would otherwise compare each body with every earlier one.
 */
function bodyKey(header: ChunkHeaderCache, bytes: Uint8Array): string {
  return `${header.messageNumber} ${header.beginTime} ${header.endTime} ${bytes.length} ${crc32(bytes)}`;
}
