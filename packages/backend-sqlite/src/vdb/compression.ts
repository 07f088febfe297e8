import { CompressType, type ResolvedWriterConfig } from '@vlink/bag-core';
import { CompressionDecider } from '@vlink/bag-core/internal';

export { decompressFrame, frameOriginalSize, isCompressionFrame } from '@vlink/bag-core/internal';

/** `compress` is `auto` or `lzav`: LZAV per message for `.vdb` (format reference §1.2). */
export function compressionEnabled(config: ResolvedWriterConfig): boolean {
  return config.compress === CompressType.Auto || config.compress === CompressType.Lzav;
}

/** The recording's compression rules (format reference §3.3), or undefined when compression is off. */
export function createDecider(config: ResolvedWriterConfig): CompressionDecider | undefined {
  if (!compressionEnabled(config)) return undefined;
  return new CompressionDecider({
    enabled: true,
    startSize: config.compressStartSize,
    level: config.compressLevel,
    ignoreUrls: config.ignoreCompressUrls,
  });
}
