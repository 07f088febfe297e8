import type { SealedChunk } from './chunk-builder.js';
import type { ChunkIndex } from './records.js';

/** Where a written chunk is and what it holds, kept by `DataSection` for the summary's chunk index records. */
export interface ChunkEntry {
  startRel: number;
  endRel: number;
  offset: number;
  length: number;
  indexOffsets: Map<number, bigint>;
  indexLength: number;
  compression: string;
  storedSize: number;
  uncompressedSize: number;
}

/**
 * The entry of `sealed`, written at file offset `offset` with a header of `headerLength` bytes and `storedSize` bytes
 * of records (compressed or not); its message indexes follow the records.
 */
export function chunkEntry(
  sealed: SealedChunk,
  offset: number,
  headerLength: number,
  storedSize: number,
  compression: string,
): ChunkEntry {
  const length = headerLength + storedSize;
  const indexOffsets = new Map<number, bigint>();
  for (let i = 0; i < sealed.indexIds.length; i++)
    indexOffsets.set(sealed.indexIds[i]!, BigInt(offset + length + sealed.indexOffsets[i]!));
  return {
    startRel: sealed.startRel,
    endRel: sealed.endRel,
    offset,
    length,
    indexOffsets,
    indexLength: sealed.index.length,
    compression,
    storedSize,
    uncompressedSize: sealed.uncompressedSize,
  };
}

/** The chunk index record of an entry, times made absolute by `absTime`. */
export function chunkIndexRecord(c: ChunkEntry, absTime: (rel: number) => bigint): Omit<ChunkIndex, 'type'> {
  return {
    messageStartTime: absTime(c.startRel),
    messageEndTime: absTime(c.endRel),
    chunkStartOffset: BigInt(c.offset),
    chunkLength: BigInt(c.length),
    messageIndexOffsets: c.indexOffsets,
    messageIndexLength: BigInt(c.indexLength),
    compression: c.compression,
    compressedSize: BigInt(c.storedSize),
    uncompressedSize: BigInt(c.uncompressedSize),
  };
}
