/**
 * A unit of the data section the reader loads at once: a chunk record, or a span of records outside chunks.
 * Blocks are kept in file order; reading them in that order gives VLink's file order.
 */
export interface Block {
  kind: 'chunk' | 'span';
  /** File offset of the chunk record, or of the span's first record. */
  offset: number;
  /** Bytes of the chunk record (prefix included), or of the span. */
  length: number;
  /** Smallest and largest message log time inside (inclusive). */
  startTime: bigint;
  endTime: bigint;
  /** Channel ids with messages inside, when known (lets url filters skip whole blocks). */
  channels: ReadonlySet<number> | undefined;
  /** A chunk's compression (`''` for none), from its index or its record: what the file says it uses. */
  compression?: string;
  /** A chunk located by a chunk index (`startTime`, `endTime` are the index's): its record must say the same. */
  indexed?: boolean;
}

export function joinTime(hi: number, lo: number): bigint {
  return (BigInt(hi) << 32n) | BigInt(lo);
}

export function splitTime(t: bigint): [hi: number, lo: number] {
  return [Number((t >> 32n) & 0xffffffffn), Number(t & 0xffffffffn)];
}
