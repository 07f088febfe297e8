import { BagError } from '@vlink/bag-core';
import type { ChunkCodec } from '../codecs.js';
import type { CompressedChunk, PipelinedCompressor } from '../compress/pipelined-compressor.js';
import type { Writable } from '../io/writable.js';
import { ByteWriter } from './byte-writer.js';
import type { ChunkBuilder, SealedChunk } from './chunk-builder.js';
import { PLAIN_CHUNK_HEADER, writeChunkHeader } from './chunk-encoders.js';
import { Opcode } from './constants.js';
import { crc32Append, crc32Combine } from './crc32.js';
import { type ChunkEntry, chunkEntry, chunkIndexRecord } from './chunk-entry.js';
import type { ChunkIndex } from './records.js';

/** Records outside chunks are buffered up to this size before a write. */
const OUT_FLUSH = 1024 * 1024;
/** As mcap's C++ writer: chunks below 1 KiB, or saving less than 2 %, are stored uncompressed. */
const MIN_COMPRESS_SIZE = 1024;
const MIN_COMPRESS_RATIO = 1.02;

export interface DataSectionOptions {
  writable: Writable;
  /** Chunk compression: `''`, or the name of `codec`. */
  compression: string;
  codec: ChunkCodec | undefined;
  compressionLevel: number;
  compressor: PipelinedCompressor | undefined;
  /** Compute the data-section CRC (chunk CRCs are the builder's). */
  chunkCrc: boolean;
  /** Records are collected in chunks (else every record is loose). */
  chunking: boolean;
  baseHi: number;
  baseLo: number;
  /** For error messages. */
  file: string | undefined;
}

/** A sealed chunk not written yet: in the compressor, or `done` (compressed on the writer's thread, or not worth it). */
interface PendingChunk extends SealedChunk {
  done?: { stored: Uint8Array; useCompressed: boolean };
}

/** Whether a chunk is stored compressed: as mcap's C++ writer, only when that saves at least 2 %. */
function storesCompressed(records: Uint8Array, compressed: Uint8Array | undefined): boolean {
  return compressed !== undefined && records.length / compressed.length >= MIN_COMPRESS_RATIO;
}

/**
 * The bytes of an MCAP data section on their way to the writable, in file order: loose records (buffered), and each
 * sealed chunk by one of three routes — whole in memory (compressed on this thread if worth it), through the
 * pipelined compressor when it is free (written once it is done, the bytes the same; while it is busy, the next chunk
 * is compressed on this thread at the same time), or, for big payloads in
 * uncompressed chunks, spilled to disk as they come behind a placeholder header patched at close. Keeps the
 * data-section CRC (each byte checksummed once) and the chunk indexes of the summary.
 */
export class DataSection {
  /** Pending bytes of the data section outside any chunk. */
  readonly out = new ByteWriter(256 * 1024);
  /** Uncompressed chunks may spill big payloads straight to disk (the writable can write vectors and patch). */
  readonly canSpill: boolean;
  readonly chunkIndexes: ChunkEntry[] = [];
  private readonly w: Writable;
  private readonly placeholder = new ByteWriter(64);
  private outSince = 0;
  /** CRC of every data-section byte handed to the writable, in file order (see `trackData`). */
  private dataCrc = 0;
  /** A spilled chunk: the data-section CRC up to its placeholder header, which is only known at close. */
  private dataCrcBeforeSpill = 0;
  /** File offset of the placeholder header once part of the open chunk went to disk, else −1. */
  private spilledAt = -1;
  /**
   * Chunks sealed and not written yet, in file order: those in the compressor, and those compressed on this thread
   * while it was busy (`done`). Nothing else reaches the writable before them.
   */
  private readonly pending: PendingChunk[] = [];
  /** How many of `pending` are in the compressor. */
  private inCompressor = 0;
  private finished = false;

  constructor(private readonly opts: DataSectionOptions) {
    this.w = opts.writable;
    this.canSpill =
      opts.chunking && !opts.codec && typeof this.w.writev === 'function' && typeof this.w.writeAt === 'function';
  }

  /** Notes when loose bytes start collecting (for `pendingAgeMs`); call before adding to `out`. */
  markOut(): void {
    if (this.out.length === 0) this.outSince = Date.now();
  }

  /** A loose message's payload, after its header in `out`: handed over as it is when `direct`, else buffered. */
  appendLoose(data: Uint8Array, direct: boolean): void {
    if (direct && this.w.writev) {
      const head = this.out.view8();
      this.trackData(head);
      this.trackData(data);
      this.w.writev([head, data]);
      this.out.reset();
    } else {
      this.out.raw(data);
      if (this.out.length >= OUT_FLUSH) this.flushOut();
    }
  }

  /** Buffered loose records past the flush size are written. */
  flushIfFull(): void {
    if (this.out.length >= OUT_FLUSH) this.flushOut();
  }

  /** Writes the chunks in compression, then the loose records. */
  flushOut(): void {
    this.settle();
    if (this.out.length === 0) return;
    const bytes = this.out.view8();
    this.trackData(bytes);
    this.w.write(bytes);
    this.out.reset();
  }

  /** Bytes handed to the writable plus pending ones (a chunk in compression at its uncompressed size). */
  position(chunk: ChunkBuilder): number {
    const open = chunk.isOpen ? (this.spilledAt < 0 ? PLAIN_CHUNK_HEADER : 0) + chunk.records.length : 0;
    let pending = 0;
    for (const p of this.pending)
      pending += (p.before?.length ?? 0) + PLAIN_CHUNK_HEADER + p.uncompressedSize + p.index.length;
    return this.w.position() + this.out.length + pending + open;
  }

  /** ms since the oldest pending byte started collecting, or −1 when nothing is pending. */
  pendingAgeMs(chunk: ChunkBuilder, now: number): number {
    if (this.pending.length > 0) return now - this.pending[0]!.openedAt;
    if (chunk.isOpen) return now - chunk.openedAt;
    if (this.out.length > 0) return now - this.outSince;
    return -1;
  }

  /** Sends the chunk's pending records and `payload` to disk now; the header is patched at close. */
  spill(chunk: ChunkBuilder, payload: Uint8Array): void {
    this.settle();
    const parts: Uint8Array[] = [];
    if (this.out.length > 0) {
      parts.push(this.out.view8());
      this.trackData(this.out.view8());
    }
    if (this.spilledAt < 0) {
      this.spilledAt = this.w.position() + this.out.length;
      // The data-section CRC goes on from here once the header is known (writeSpilled).
      this.dataCrcBeforeSpill = this.dataCrc;
      // Placeholder: a chunk opcode with length 0, so a crash mid-chunk leaves a record scanners stop at.
      const s = this.placeholder;
      s.reset();
      s.reserve(PLAIN_CHUNK_HEADER);
      s.bytes.fill(0, 0, PLAIN_CHUNK_HEADER);
      s.bytes[0] = Opcode.Chunk;
      s.length = PLAIN_CHUNK_HEADER;
      parts.push(s.view8());
    }
    parts.push(chunk.spill(payload), payload);
    this.w.writev!(parts);
    this.out.reset();
    chunk.records.reset();
  }

  /** Seals the open chunk and sends it on its route; a chunk of schema/channel records only becomes loose records. */
  closeChunk(chunk: ChunkBuilder): void {
    if (!chunk.isOpen) return;
    if (chunk.messages === 0) {
      // Only schema/channel records: they are valid outside a chunk too, so no message-less chunk is written.
      this.markOut();
      this.out.raw(chunk.records.view8());
      chunk.close();
      return;
    }
    const records = chunk.records.view8();
    if (this.spilledAt >= 0) this.writeSpilled(chunk.seal(records), records);
    else {
      // The chunks done meanwhile are written first (no wait): the compressor then has room for this one.
      this.writeDone();
      // The records' CRC is left to whichever thread compresses them (none spilled: compressed chunks never spill).
      const sealed = chunk.seal(records, false);
      if (!this.handToCompressor(sealed, records)) {
        if (this.opts.chunkCrc) sealed.crc = crc32Append(sealed.crc, records);
        this.compressHere(sealed, records);
      }
    }
    chunk.close();
    this.spilledAt = -1;
  }

  /**
   * Compresses a chunk on this thread. With chunks in the compressor, it is compressed before they are waited for
   * (both threads compress at once: with 1 MiB frames in zstd chunks, filling a chunk takes far less than compressing
   * it), and queued behind them instead of waiting: this thread goes on filling the next chunk, and the compressor
   * keeps a chunk queued (hand-measured, Node, 192 MiB of 1 MiB frames in 4 MiB chunks, minimum of 12 runs: waiting
   * for the compressor's one chunk before writing this one, 256–268 ms; two chunks in it and this one queued, 243–249).
   */
  private compressHere(sealed: SealedChunk, records: Uint8Array): void {
    let compressed: Uint8Array | undefined;
    if (this.opts.codec && sealed.uncompressedSize >= MIN_COMPRESS_SIZE) {
      try {
        compressed = this.opts.codec.compress!(records, this.opts.compressionLevel);
      } catch (error) {
        throw BagError.wrap(error, 'INTERNAL', `${this.opts.compression} compression failed`, {
          file: this.opts.file,
        });
      }
    }
    const useCompressed = storesCompressed(records, compressed);
    if (this.pending.length === 0) {
      this.writeChunk(sealed, useCompressed ? compressed! : records, useCompressed, this.outBytes());
      this.out.reset();
      return;
    }
    // Kept until the chunks before it are written: the builder's buffers (records, index) and `out` are reused.
    this.pending.push({
      ...this.detached(sealed),
      done: { stored: useCompressed ? compressed! : records.slice(), useCompressed },
    });
    this.out.reset();
    // Bounded: at most one chunk compressed here waits beside those in the compressor.
    if (this.pending.length > this.opts.compressor!.depth + 1) this.settleOldest();
  }

  /** The loose records pending in `out`, if any (a view: reset `out` once they are written). */
  private outBytes(): Uint8Array | undefined {
    return this.out.length > 0 ? this.out.view8() : undefined;
  }

  /** Writes the chunks in compression, if any (waiting for them): before any other byte reaches the writable. */
  settle(): void {
    while (this.pending.length > 0) this.settleOldest();
  }

  /**
   * Ends the data section: the chunks in compression are written, and the loose records still in `out` are the
   * last of it. Returns its CRC (0 when not computed); bytes written afterwards (the summary) are not tracked.
   */
  finish(): number {
    this.settle();
    this.finished = true;
    return this.opts.chunkCrc ? crc32Append(this.dataCrc, this.out.view8()) : 0;
  }

  /** The summary's chunk index records, times made absolute by `absTime`. */
  chunkIndexRecords(absTime: (rel: number) => bigint): Array<Omit<ChunkIndex, 'type'>> {
    return this.chunkIndexes.map((c) => chunkIndexRecord(c, absTime));
  }

  /** Adds bytes about to reach the writable (in file order) to the data-section CRC. */
  private trackData(bytes: Uint8Array): void {
    if (this.opts.chunkCrc && !this.finished && bytes.length > 0) this.dataCrc = crc32Append(this.dataCrc, bytes);
  }

  /**
   * Hands the chunk to the compressor when it is free: the writer goes on filling the next chunk meanwhile, and the
   * chunk is written by a later `closeChunk` or `settle`. False when there is no compressor, it is still busy with the
   * chunk before (this thread then compresses this one itself, see `compressHere`), or it cannot take the chunk.
   */
  private handToCompressor(sealed: SealedChunk, records: Uint8Array): boolean {
    const compressor = this.opts.compressor;
    if (!compressor || !this.opts.codec || sealed.uncompressedSize < MIN_COMPRESS_SIZE) return false;
    if (
      this.inCompressor >= compressor.depth ||
      !compressor.start(records, this.opts.compressionLevel, this.opts.chunkCrc)
    )
      return false;
    // Compressor jobs come back in the order they went in: `pending` keeps the file order across both kinds.
    this.inCompressor++;
    this.pending.push(this.detached(sealed));
    this.out.reset();
    return true;
  }

  /** The sealed chunk with copies of what the builder and `out` reuse before it is written. */
  private detached(sealed: SealedChunk): PendingChunk {
    return {
      ...sealed,
      index: sealed.index.slice(),
      ...(this.out.length > 0 ? { before: this.out.view8().slice() } : {}),
    };
  }

  /** Writes the oldest pending chunks that are done (compressed here, or by a compressor that has finished them). */
  private writeDone(): void {
    while (this.pending.length > 0 && (this.pending[0]!.done || this.opts.compressor!.finished())) this.settleOldest();
  }

  private settleOldest(): void {
    const chunk = this.pending.shift()!;
    if (chunk.done) {
      this.writeChunk(chunk, chunk.done.stored, chunk.done.useCompressed, chunk.before);
      return;
    }
    let result: CompressedChunk;
    this.inCompressor--;
    try {
      result = this.opts.compressor!.finish();
    } catch (error) {
      throw BagError.wrap(error, 'INTERNAL', `${this.opts.compression} compression failed`, { file: this.opts.file });
    }
    const { records, compressed } = result;
    if (this.opts.chunkCrc)
      chunk.crc =
        result.recordsCrc === undefined
          ? crc32Append(chunk.crc, records)
          : crc32Combine(chunk.crc, result.recordsCrc, records.length);
    const useCompressed = storesCompressed(records, compressed);
    if (useCompressed) this.writeChunk(chunk, compressed!, true, chunk.before, result.compressedCrc);
    else this.writeChunk(chunk, records, false, chunk.before);
  }

  /**
   * Writes a chunk that is whole in memory, after `before`: header, records (`stored`), message indexes.
   * `storedCrc`: the CRC-32 of `stored` when compressed, if the compressor computed it.
   */
  private writeChunk(
    sealed: SealedChunk,
    stored: Uint8Array,
    useCompressed: boolean,
    before: Uint8Array | undefined,
    storedCrc?: number,
  ): void {
    const compression = useCompressed ? this.opts.compression : '';
    const header = this.chunkHeader(sealed, compression, stored.length);
    const chunkOffset = this.w.position() + (before?.length ?? 0);
    const parts = before ? [before, header, stored, sealed.index] : [header, stored, sealed.index];
    if (this.opts.chunkCrc) {
      if (before) this.trackData(before);
      this.trackData(header);
      // Stored uncompressed, the records are what the chunk CRC covers: no second pass over them.
      if (!useCompressed) this.dataCrc = crc32Combine(this.dataCrc, sealed.crc, stored.length);
      else if (storedCrc !== undefined) this.dataCrc = crc32Combine(this.dataCrc, storedCrc, stored.length);
      else this.trackData(stored);
      this.trackData(sealed.index);
    }
    if (this.w.writev) this.w.writev(parts);
    else for (const p of parts) this.w.write(p);
    this.addChunkEntry(sealed, chunkOffset, header.length, stored.length, compression);
  }

  /** Finishes a spilled chunk: its records are partly on disk already, after a placeholder header patched now. */
  private writeSpilled(sealed: SealedChunk, records: Uint8Array): void {
    const header = this.chunkHeader(sealed, '', sealed.uncompressedSize);
    if (header.length !== PLAIN_CHUNK_HEADER)
      throw new BagError('INTERNAL', 'chunk header size changed after spilling');
    const parts: Uint8Array[] = [];
    if (records.length > 0) parts.push(records);
    if (sealed.index.length > 0) parts.push(sealed.index);
    if (parts.length) this.w.writev!(parts);
    this.w.writeAt!(header, this.spilledAt);
    if (this.opts.chunkCrc) {
      const withHeader = crc32Append(this.dataCrcBeforeSpill, header);
      this.dataCrc = crc32Combine(withHeader, sealed.crc, sealed.uncompressedSize);
      this.trackData(sealed.index);
    }
    this.addChunkEntry(sealed, this.spilledAt, header.length, sealed.uncompressedSize, '');
  }

  private chunkHeader(sealed: SealedChunk, compression: string, recordsLength: number): Uint8Array {
    const header = new ByteWriter(64);
    writeChunkHeader(header, this.opts.baseHi, this.opts.baseLo, {
      startRel: sealed.startRel,
      endRel: sealed.endRel,
      uncompressedSize: sealed.uncompressedSize,
      crc: sealed.crc,
      compression,
      recordsLength,
    });
    return header.view8();
  }

  private addChunkEntry(
    sealed: SealedChunk,
    offset: number,
    header: number,
    stored: number,
    compression: string,
  ): void {
    this.chunkIndexes.push(chunkEntry(sealed, offset, header, stored, compression));
  }
}
