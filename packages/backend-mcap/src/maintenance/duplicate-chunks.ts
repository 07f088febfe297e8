import type { Readable } from '../io/readable.js';
import { crc32 } from '../mcap/crc32.js';

/**
 * The chunks a repair has kept, to tell a second copy of one of them. A writer never writes the same chunk record
 * twice (its messages' sequence numbers and times move on), but damage can: bytes copied over other bytes put a
 * whole chunk, CRC and all, a second time into the data section, and the walk that resynchronises on the next chunk
 * that decodes finds it there (fuzz `.vcapx --seed 1206`, case 764: a repaired segment read 5 messages twice).
 * Chunks are told apart by the CRC-32 of their record bytes and their length, then compared byte for byte.
 */
export class DuplicateChunks {
  /** Offset of the first chunk kept per `crc:length`. */
  private readonly kept = new Map<string, number>();

  /**
   * Why `chunk` (a chunk record of `source`) is left out: it has exactly the bytes of a chunk kept before it. Undefined
   * when it has not, and it is then remembered as kept.
   */
  copyOf(source: Readable, chunk: { buf: Uint8Array; at: number; length: number; offset: number }): string | undefined {
    const bytes = chunk.buf.subarray(chunk.at, chunk.at + chunk.length);
    const key = `${crc32(bytes)}:${bytes.length}`;
    const first = this.kept.get(key);
    if (first === undefined) this.kept.set(key, chunk.offset);
    else if (equalBytes(source.read(first, bytes.length, new Uint8Array(bytes.length)), bytes))
      return `chunk at offset ${chunk.offset} (${chunk.length} bytes) dropped: a copy of the chunk at offset ${first}`;
    return undefined;
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
