import { BagError, CompressType, type ResolvedWriterConfig } from '@vlink/bag-core';

/**
 * TEMPORARY bridge until core exports the compression frame and LZAV codec (packages/core/src/codecs). Only the
 * frame test (spec §3.2) lives here; compression itself is reported as not yet available.
 */
export interface Decider {
  maybeCompress(url: string, data: Uint8Array): Uint8Array;
  snapshot(): unknown;
  restore(snapshot: unknown): void;
}

export function compressionEnabled(config: ResolvedWriterConfig): boolean {
  return config.compress === CompressType.Auto || config.compress === CompressType.Lzav;
}

export function createDecider(config: ResolvedWriterConfig): Decider | undefined {
  if (!compressionEnabled(config)) return undefined;
  throw new BagError('NOT_SUPPORTED', 'LZAV compression is not available yet');
}

export function isCompressionFrame(blob: Uint8Array): boolean {
  const n = blob.length;
  return (
    n >= 13 &&
    blob[0] === 0x17 && blob[1] === 0x49 && blob[2] === 0xb2 && blob[3] === 0x6f &&
    blob[n - 4] === 0xa7 && blob[n - 3] === 0x05 && blob[n - 2] === 0xed && blob[n - 1] === 0x71
  );
}

export function frameOriginalSize(blob: Uint8Array): number {
  return ((blob[4]! << 24) | (blob[5]! << 16) | (blob[6]! << 8) | blob[7]!) >>> 0;
}

export function decompressFrame(_blob: Uint8Array): Uint8Array {
  throw new BagError('NOT_SUPPORTED', 'LZAV decompression is not available yet');
}
