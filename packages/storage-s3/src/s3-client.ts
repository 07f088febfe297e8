import { AwsClient } from 'aws4fetch';
import { BagError } from '@vlink/bag-core';
import { readBodyInto } from './read-body-into.js';
import type { S3Location } from './s3-location.js';
import { resolveS3Options, type ResolvedS3Options, type S3Options } from './s3-options.js';

/** What a client has sent so far: requests and response body bytes (what the range-read goals are measured in). */
export interface S3TransferStats {
  requests: number;
  bytes: number;
}

/** One ranged GET's answer: the bytes and the whole object's size (from `Content-Range`). */
export interface RangeAnswer {
  bytes: Uint8Array;
  objectSize: number;
  /** The object's ETag (its version: a cached copy is reused only while it is the same). */
  etag: string;
}

/**
 * A minimal S3 client over `fetch`, signed with AWS Signature V4 by `aws4fetch`: ranged GETs and whole-object PUTs
 * are all the bag readers need, so no SDK (the AWS SDK pulls in dozens of packages and Node-only code).
 */
export class S3Client {
  readonly options: ResolvedS3Options;
  readonly stats: S3TransferStats = { requests: 0, bytes: 0 };
  private readonly aws: AwsClient;

  constructor(options: S3Options = {}) {
    this.options = resolveS3Options(options);
    const { accessKeyId, secretAccessKey, sessionToken, region } = this.options;
    this.aws = new AwsClient({
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      region,
      service: 's3',
      retries: 2,
    });
  }

  /** The object's https url (path or virtual-hosted style), naming exactly its key (`keyPath`). */
  objectUrl({ bucket, key }: S3Location): string {
    const path = keyPath(key, `s3://${bucket}/${key}`);
    const base = new URL(this.options.endpoint);
    if (this.options.pathStyle) return `${base.origin}${trimSlash(base.pathname)}/${bucket}/${path}`;
    return `${base.protocol}//${bucket}.${base.host}${trimSlash(base.pathname)}/${path}`;
  }

  /**
   * `length` bytes at `offset` (or, with `offset < 0`, the last `-offset` bytes: a suffix range, which also tells the
   * object's size in one request). Fewer bytes only at the object's end.
   */
  async getRange(location: S3Location, offset: number, length: number): Promise<RangeAnswer> {
    const response = await this.sendRange(location, offset, length);
    const bytes = new Uint8Array(await response.arrayBuffer());
    this.stats.bytes += bytes.length;
    return { bytes: askedPart(response, bytes, offset, length), ...rangeHeaders(response, bytes.length) };
  }

  /**
   * `getRange` with the bytes read into `into` (at least `length` bytes; shared memory allowed) as they arrive,
   * instead of into a new buffer first: a reader's block on Deno (`readBodyInto` has the figures). How many came.
   */
  async getRangeInto(
    location: S3Location,
    offset: number,
    length: number,
    into: Uint8Array,
  ): Promise<Omit<RangeAnswer, 'bytes'> & { length: number }> {
    const response = await this.sendRange(location, offset, length);
    if (response.status === 206) {
      const file = `s3://${location.bucket}/${location.key}`;
      const received = await readBodyInto(response.body, into.subarray(0, length)).catch((error: unknown) => {
        throw BagError.wrap(error, 'IO_ERROR', `reading ${length} bytes at ${offset}`, { file });
      });
      this.stats.bytes += received;
      return { length: received, ...rangeHeaders(response, received) };
    }
    // The server ignored the range (a 200 with the whole object): the part asked for is cut from it.
    const bytes = new Uint8Array(await response.arrayBuffer());
    this.stats.bytes += bytes.length;
    const part = askedPart(response, bytes, offset, length);
    into.set(part);
    return { length: part.length, ...rangeHeaders(response, bytes.length) };
  }

  private sendRange(location: S3Location, offset: number, length: number): Promise<Response> {
    const range = offset < 0 ? `bytes=${offset}` : `bytes=${offset}-${offset + length - 1}`;
    return this.send(location, { method: 'GET', headers: { range } });
  }

  /** Uploads a whole object in one PUT (tests, small files; recordings go up in parts: `uploadFile`). */
  async put(location: S3Location, body: Uint8Array): Promise<void> {
    // A copy of exactly these bytes: a Node Buffer's `slice()` is a view, and its `.buffer` may be a shared pool.
    const copy = new Uint8Array(body.byteLength);
    copy.set(body);
    await this.send(location, { method: 'PUT', body: copy.buffer });
  }

  /** The bucket's url (path or virtual-hosted style) with a query, for bucket-level calls (listing). */
  bucketUrl(bucket: string, query: Record<string, string>): string {
    const url = new URL(this.objectUrl({ bucket, key: '' }).replace(/\/$/, '/'));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url.toString();
  }

  /**
   * A signed request to the object's url with a query (`?uploads`, `?partNumber=…&uploadId=…`): the answer when it
   * is a success, else the typed error (`NOT_FOUND`, `IO_ERROR`).
   */
  async request(location: S3Location, init: RequestInit, query: Record<string, string> = {}): Promise<Response> {
    const url = new URL(this.objectUrl(location));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    // A bare flag (`?uploads`) goes out as `uploads=`, which S3 reads as the same flag.
    return this.sendTo(url.toString(), init, `s3://${location.bucket}/${location.key}`);
  }

  /** A signed GET of a bucket-level url (`bucketUrl`); the body as text. */
  async getText(url: string, file: string): Promise<string> {
    const response = await this.sendTo(url, { method: 'GET' }, file);
    const text = await response.text();
    this.stats.bytes += text.length;
    return text;
  }

  /** Creates a bucket (tests and first use of a local server). */
  async createBucket(bucket: string): Promise<void> {
    const url = this.objectUrl({ bucket, key: '' }).replace(/\/$/, '');
    const response = await this.signedFetch(url, { method: 'PUT' });
    if (!response.ok && response.status !== 409) throw await httpError(response, `s3://${bucket}`);
  }

  private send(location: S3Location, init: RequestInit): Promise<Response> {
    return this.sendTo(this.objectUrl(location), init, `s3://${location.bucket}/${location.key}`);
  }

  private async sendTo(url: string, init: RequestInit, file: string): Promise<Response> {
    const response = await this.signedFetch(url, init);
    if (!response.ok) throw await httpError(response, file);
    return response;
  }

  private async signedFetch(url: string, init: RequestInit): Promise<Response> {
    this.stats.requests++;
    const request = await this.aws.sign(url, init);
    try {
      return await this.options.fetch(request);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', `cannot reach ${this.options.endpoint.origin}`, { file: url });
    }
  }
}

/** The object's size (from `Content-Range`; a 200's body is the whole object) and ETag of a range's answer. */
function rangeHeaders(response: Response, received: number): { objectSize: number; etag: string } {
  const total = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '');
  return { objectSize: total ? Number(total[1]) : received, etag: response.headers.get('etag') ?? '' };
}

/** The bytes asked for of a range's answer: all of a 206; of a 200 (the range ignored), the part asked for. */
function askedPart(response: Response, bytes: Uint8Array, offset: number, length: number): Uint8Array {
  if (response.status !== 200) return bytes;
  if (offset >= 0) return bytes.subarray(offset, offset + length);
  return bytes.subarray(Math.max(0, bytes.length + offset));
}

/**
 * A key as a url path that S3 reads back as exactly that key: each segment percent-encoded, and a `.` or `..`
 * segment joined to its neighbours with `%2F` instead of `/`. URL parsing (`new URL`, and `fetch` itself) removes
 * dot segments, `%2E` spellings included, so `p/./x.vcap` would ask for `p/x.vcap`; S3 decodes `%2F` to `/`, and a
 * segment such as `p%2F.%2Fx.vcap` is not a dot segment. The signature is computed over the decoded key, as S3 does.
 * A key that is only `.` or `..` has no neighbour to join and cannot be asked for over HTTP at all.
 */
function keyPath(key: string, file: string): string {
  if (key === '.' || key === '..') {
    throw new BagError('INVALID_ARGUMENT', `the S3 key "${key}" cannot be named in a request url`, { file });
  }
  const segments = key.split('/');
  const dot = segments.map((segment) => segment === '.' || segment === '..');
  let path = '';
  for (let i = 0; i < segments.length; i++) {
    if (i > 0) path += dot[i] || dot[i - 1] ? '%2F' : '/';
    path += encodeURIComponent(segments[i]!);
  }
  return path;
}

function trimSlash(path: string): string {
  return path.replace(/\/+$/, '');
}

/** An S3 error answer as a typed error: 404 is `NOT_FOUND`, the rest `IO_ERROR` with S3's own code and message. */
async function httpError(response: Response, file: string): Promise<BagError> {
  const text = await response.text().catch(() => '');
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  const detail = [response.status, code, message].filter(Boolean).join(' ');
  if (response.status === 404) return new BagError('NOT_FOUND', `not found on S3 (${detail})`, { file });
  return new BagError('IO_ERROR', `S3 answered ${detail}`, { file });
}
