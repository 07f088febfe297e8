/**
 * CBOR with each indefinite-length byte or text string (RFC 8949 §3.2.3: definite chunks of the same type up to a
 * break) rewritten as one definite string of its joined chunks; undefined when there is none, or when the bytes are
 * not well-formed as far as this walk reads them (the decoder then reports its own error). cborg reads indefinite
 * arrays and maps but refuses indefinite strings, which are valid CBOR (a streaming encoder writes them): this puts
 * them in the form it reads, instead of showing a valid payload as damaged. The walk is iterative, so no nesting depth
 * can overflow the stack, and it touches each byte once.
 */
export function joinIndefiniteStrings(data: Uint8Array): Uint8Array | undefined {
  const parts: Uint8Array[] = [];
  let copiedTo = 0;
  // Items still expected by each open array or map, innermost last; INDEFINITE: until a break.
  const open: number[] = [];
  let pos = 0;
  for (;;) {
    if (pos >= data.length) return undefined;
    let done: boolean;
    if (data[pos] === BREAK) {
      if (open.pop() !== INDEFINITE) return undefined;
      pos++;
      done = true;
    } else {
      const head = readHead(data, pos);
      if (head === undefined) return undefined;
      const { major, count, end } = head;
      done = true;
      if ((major === BYTES || major === TEXT) && count === INDEFINITE) {
        const joined = joinChunks(data, end, major);
        if (joined === undefined) return undefined;
        parts.push(data.subarray(copiedTo, pos), ...joined.parts);
        pos = copiedTo = joined.end;
      } else if (major === BYTES || major === TEXT) {
        if (end + count > data.length) return undefined;
        pos = end + count;
      } else if (major === ARRAY || major === MAP) {
        pos = end;
        const items = count === INDEFINITE ? INDEFINITE : major === MAP ? count * 2 : count;
        if (items !== 0) {
          open.push(items);
          done = false;
        }
      } else if (count === INDEFINITE)
        return undefined; // only strings, arrays and maps can be indefinite
      else {
        pos = end;
        done = major !== TAG; // a tag's content is the next item
      }
    }
    // A finished item may finish its array or map, and that one its own.
    while (done && open.length > 0) {
      const last = open.length - 1;
      if (open[last] === INDEFINITE) done = false;
      else if (--open[last]! === 0) open.pop();
      else done = false;
    }
    if (done) break;
  }
  if (parts.length === 0 || pos !== data.length) return undefined;
  parts.push(data.subarray(copiedTo));
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const BYTES = 2;
const TEXT = 3;
const ARRAY = 4;
const MAP = 5;
const TAG = 6;
const BREAK = 0xff;
const INDEFINITE = -1;

/** The head at `pos`: major type, argument (INDEFINITE for additional info 31) and where it ends. */
function readHead(data: Uint8Array, pos: number): { major: number; count: number; end: number } | undefined {
  const initial = data[pos]!;
  const major = initial >> 5;
  const info = initial & 31;
  if (info < 24) return { major, count: info, end: pos + 1 };
  if (info === 31) return { major, count: INDEFINITE, end: pos + 1 };
  if (info > 27) return undefined;
  const size = 1 << (info - 24);
  if (pos + 1 + size > data.length) return undefined;
  let count = 0;
  for (let i = 1; i <= size; i++) count = count * 256 + data[pos + i]!;
  // Past 2^53 no length fits in memory, and a number would be rounded: leave it to the decoder's own error.
  if (!Number.isSafeInteger(count)) return undefined;
  return { major, count, end: pos + 1 + size };
}

/** The definite head and the contents of the chunks from `pos` to the break, and where the break ends. */
function joinChunks(data: Uint8Array, pos: number, major: number): { parts: Uint8Array[]; end: number } | undefined {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    if (pos >= data.length) return undefined;
    if (data[pos] === BREAK) break;
    const head = readHead(data, pos);
    // Each chunk is a definite string of the same type (RFC 8949 §3.2.3).
    if (head === undefined || head.major !== major || head.count === INDEFINITE) return undefined;
    if (head.end + head.count > data.length) return undefined;
    chunks.push(data.subarray(head.end, head.end + head.count));
    length += head.count;
    pos = head.end + head.count;
  }
  return { parts: [definiteHead(major, length), ...chunks], end: pos + 1 };
}

function definiteHead(major: number, length: number): Uint8Array {
  const type = major << 5;
  if (length < 24) return Uint8Array.of(type | length);
  if (length < 0x100) return Uint8Array.of(type | 24, length);
  if (length < 0x10000) return Uint8Array.of(type | 25, length >> 8, length & 0xff);
  const wide = length > 0xffffffff;
  const head = new Uint8Array(wide ? 9 : 5);
  head[0] = type | (wide ? 27 : 26);
  const view = new DataView(head.buffer);
  if (wide) view.setBigUint64(1, BigInt(length));
  else view.setUint32(1, length);
  return head;
}
