import type { Readable } from '../io/readable.js';
import { crc32 } from './crc32.js';
import { equalBytes } from '@vlink/bag-core/internal';

/**
 * The chunks read so far, to tell a second copy of one of them. A writer never writes the same chunk record twice
 * (its messages' sequence numbers and times move on), but damage can: bytes copied over other bytes put a whole
 * chunk, CRC and all, a second time into the data section, and a walk that goes on after damage finds it there (fuzz
 * `.vcapx --seed 1206`, case 764: a repaired segment read 5 messages twice; `--seed 1407`, case 958: a recovery scan
 * read 10 twice). Used by the recovery scan, by `check` and by the repair, and by the scan of a ROS 1 bag (its chunks
 * are records too). Chunks are told apart by the CRC-32 of their record bytes and their length, then compared byte
 * for byte.
 */
export class DuplicateChunks {
  /** Offset of the first chunk seen per `crc:length`. */
  private readonly seen = new Map<string, number>();

  /**
   * The offset of the earlier chunk whose bytes `chunk` (a chunk record of `source`, `buf[at..at+length)`, at
   * `offset` in the file) repeats exactly; undefined when there is none, and `chunk` is then remembered.
   */
  copyOf(source: Readable, chunk: { buf: Uint8Array; at: number; length: number; offset: number }): number | undefined {
    const bytes = chunk.buf.subarray(chunk.at, chunk.at + chunk.length);
    const key = `${crc32(bytes)}:${bytes.length}`;
    const first = this.seen.get(key);
    if (first === undefined) {
      this.seen.set(key, chunk.offset);
      return undefined;
    }
    return equalBytes(source.read(first, bytes.length, new Uint8Array(bytes.length)), bytes) ? first : undefined;
  }
}
