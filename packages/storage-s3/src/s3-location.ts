import { BagError } from '@vlink/bag-core';

/** An object in a bucket, as written `s3://bucket/key`. */
export interface S3Location {
  bucket: string;
  key: string;
}

/** True for an `s3://` url (the scheme is case-insensitive, as in a URL). */
export function isS3Url(path: string): boolean {
  return /^s3:\/\//i.test(path);
}

/**
 * `s3://bucket/key/with/slashes.vcap` → `{ bucket, key }`. The key is kept as written (no decoding): S3 keys are
 * arbitrary strings and the signing client encodes them for the request.
 */
export function parseS3Url(path: string): S3Location {
  const match = /^s3:\/\/([^/]+)\/(.+)$/i.exec(path);
  if (!match) throw new BagError('INVALID_ARGUMENT', `not an s3://bucket/key url: ${path}`, { file: path });
  return { bucket: match[1]!, key: match[2]! };
}

/** `s3://bucket/some/prefix` (or `s3://bucket`, `s3://bucket/`) → `{ bucket, key: 'some/prefix' }` (key may be empty). */
export function parseS3Prefix(path: string): S3Location {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/i.exec(path);
  if (!match) throw new BagError('INVALID_ARGUMENT', `not an s3://bucket/prefix url: ${path}`, { file: path });
  return { bucket: match[1]!, key: match[2] ?? '' };
}
