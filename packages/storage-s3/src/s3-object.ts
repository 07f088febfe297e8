import { BagError } from '@vlink/bag-core';
import { S3Client } from './s3-client.js';
import { parseS3Url, type S3Location } from './s3-location.js';
import type { S3Options } from './s3-options.js';

/** How much of an object's end `S3Object.open` fetches with its first request (footer, summary, index of a .vcap). */
export const DEFAULT_TAIL_BYTES = 512 * 1024;

/**
 * A random-access, read-only view of one S3 object by HTTP range requests. Opening it costs one request (a suffix
 * range: the object's size and its last `tailBytes`, where MCAP keeps its footer, summary and indexes); reads inside
 * that tail are answered from memory, others cost one ranged GET each.
 */
export class S3Object {
  private constructor(
    readonly url: string,
    readonly client: S3Client,
    private readonly location: S3Location,
    readonly size: number,
    private readonly tail: Uint8Array,
    /** The object's ETag when it was opened. */
    readonly etag: string,
  ) {}

  static async open(
    url: string,
    options: S3Options & { tailBytes?: number; client?: S3Client } = {},
  ): Promise<S3Object> {
    const location = parseS3Url(url);
    const client = options.client ?? new S3Client(options);
    const tailBytes = Math.max(1, options.tailBytes ?? DEFAULT_TAIL_BYTES);
    const { bytes, objectSize, etag } = await client.getRange(location, -tailBytes, tailBytes);
    return new S3Object(url, client, location, objectSize, bytes.slice(), etag);
  }

  /** An object whose size, ETag and tail were fetched already (by a byte source's helper thread). */
  static fromTail(
    url: string,
    options: S3Options & { client?: S3Client },
    answer: { objectSize: number; bytes: Uint8Array; etag: string },
  ): S3Object {
    const client = options.client ?? new S3Client(options);
    return new S3Object(url, client, parseS3Url(url), answer.objectSize, answer.bytes, answer.etag);
  }

  /** The bytes at `offset` when the fetched tail holds all of them (no request), else undefined. */
  cached(offset: number, length: number): Uint8Array | undefined {
    const start = offset - (this.size - this.tail.length);
    if (start < 0 || length < 0 || start + length > this.tail.length) return undefined;
    return this.tail.subarray(start, start + length);
  }

  /** Exactly `length` bytes at `offset`; a range outside the object is a `CORRUPT_FILE` (callers bounds-check first). */
  async read(offset: number, length: number): Promise<Uint8Array> {
    if (
      !Number.isSafeInteger(offset) ||
      !Number.isSafeInteger(length) ||
      offset < 0 ||
      length < 0 ||
      offset + length > this.size
    )
      throw new BagError(
        'CORRUPT_FILE',
        `read of ${length} bytes at ${offset} is outside the ${this.size}-byte object`,
        {
          file: this.url,
        },
      );
    if (length === 0) return new Uint8Array(0);
    const tailStart = this.size - this.tail.length;
    if (offset >= tailStart) return this.tail.slice(offset - tailStart, offset - tailStart + length);
    const { bytes } = await this.client.getRange(this.location, offset, length);
    if (bytes.length !== length)
      throw new BagError('IO_ERROR', `S3 sent ${bytes.length} of ${length} bytes at ${offset}`, { file: this.url });
    return bytes;
  }
}
