import { BagError } from '@vlink/bag-core/errors';

/**
 * A payload that did not decode: `CORRUPT_DATA` when the bytes do not fit their schema, `NOT_FOUND` when the bag
 * embeds no usable schema for the type, `LIMIT_REACHED` past the size or depth limits, `NOT_SUPPORTED` for an
 * encoding nobody decodes here. The message names the type; the url rides in the context (`error.url`), so
 * `reason` (without it) is what the HTTP API shows as `decodeError`.
 */
export function decodeError(
  code: 'CORRUPT_DATA' | 'NOT_FOUND' | 'LIMIT_REACHED' | 'NOT_SUPPORTED',
  reason: string,
  url: string | undefined,
  cause?: unknown,
): BagError {
  return new BagError(code, reason, {
    ...(url === undefined ? {} : { url }),
    ...(cause === undefined ? {} : { cause }),
  });
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
