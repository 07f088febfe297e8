import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { ChunkLoader } from './chunk-loader.js';
import { MAGIC } from './constants.js';
import { asBagError, corrupt } from './corruption.js';
import { hasMagic, parseRecord } from './record-parser.js';
import { RecordWindow } from './record-window.js';
import type { McapRecord } from './records.js';

export interface StreamOptions {
  codecs: Codecs;
  /** Also yield the records inside each chunk, right after the chunk record (default true). */
  expandChunks?: boolean;
  validateCrcs?: boolean;
  file?: string;
}

/**
 * Every record of a complete MCAP file in file order, from the header to the footer (the streamed reader of the
 * MCAP conformance suite). Views in the records are valid until the next step. Throws `CORRUPT_FILE` for anything
 * that does not parse, including a missing trailing magic.
 */
export function* streamRecords(readable: Readable, options: StreamOptions): Generator<McapRecord> {
  const file = options.file;
  const size = readable.size();
  if (size < MAGIC.length * 2 || !hasMagic(readable.read(0, MAGIC.length).slice(), 0, MAGIC))
    throw corrupt('not an MCAP file (bad magic)', file, 0);
  const loader = new ChunkLoader(readable, options.codecs, options.validateCrcs ?? true, file);
  const win = new RecordWindow(readable, MAGIC.length, size, file);
  for (;;) {
    const at = win.pos;
    const length = win.next();
    if (length <= 0) throw corrupt('file ends before its footer', file, at);
    let record: McapRecord;
    try {
      record = parseRecord(win.buf, win.view, win.at, win.at + length).record;
    } catch (error) {
      throw asBagError(error, file, at - win.at, 'bad record');
    }
    yield record;
    if (record.type === 'Chunk' && (options.expandChunks ?? true)) {
      const r = loader.decode(win.buf, win.view, win.at, length, at);
      for (let p = r.start; p < r.end; ) {
        let inner: ReturnType<typeof parseRecord>;
        try {
          inner = parseRecord(r.bytes, r.view, p, r.end);
        } catch (error) {
          throw asBagError(error, file, at, 'bad record inside a chunk');
        }
        yield inner.record;
        p += inner.length;
      }
    }
    if (record.type === 'Footer') {
      if (win.pos !== size - MAGIC.length || !hasMagic(readable.read(win.pos, MAGIC.length).slice(), 0, MAGIC)) {
        throw corrupt('footer is not followed by the closing magic', file, win.pos);
      }
      return;
    }
    if (record.type === 'Header' && at !== MAGIC.length) throw corrupt('second header record', file, at);
  }
}
