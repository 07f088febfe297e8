const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
type NodeBuffer = { from(b: ArrayBufferLike, o: number, l: number): { toString(enc: string): string } };
const NativeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;
const hasToBase64 = typeof (Uint8Array.prototype as { toBase64?: unknown }).toBase64 === 'function';

/**
 * Standard base64 of bytes, on the hot path of JSON/NDJSON pages: the native `Uint8Array#toBase64` where the runtime
 * has it, `Buffer` where it exists (Node, Bun), else a table loop (fast enough for small payloads).
 */
export function toBase64(bytes: Uint8Array): string {
  if (bytes.length === 0) return '';
  if (hasToBase64) return (bytes as Uint8Array & { toBase64(): string }).toBase64();
  if (NativeBuffer) return NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return toBase64Portable(bytes);
}

/** The table loop used where the runtime has neither `toBase64` nor `Buffer`. */
export function toBase64Portable(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  if (i < bytes.length) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? `${ALPHABET[(n >> 6) & 63]!}=` : '==';
  }
  return out;
}
