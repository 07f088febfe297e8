import { BagError } from '@vlink/bag-core';
import { FileReadable } from '../io/file-readable.js';
import { MAGIC } from '../mcap/constants.js';
import { hasMagic } from '../mcap/record-parser.js';

/** VLink re-reads the last 8 bytes after close and fails unless they are the MCAP magic; so do we. */
export function verifyTrailingMagic(path: string): void {
  const readable = new FileReadable(path);
  try {
    const size = readable.size();
    const tail = size >= MAGIC.length ? readable.read(size - MAGIC.length, MAGIC.length) : new Uint8Array(0);
    if (!hasMagic(tail, 0, MAGIC))
      throw new BagError('IO_ERROR', 'file does not end with the MCAP magic after close', {
        file: path,
        offset: Math.max(0, size - MAGIC.length),
      });
  } finally {
    readable.close();
  }
}
