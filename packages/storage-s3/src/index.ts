export { S3Client, type RangeAnswer, type S3TransferStats } from './s3-client.js';
export { isS3Url, parseS3Url, type S3Location } from './s3-location.js';
export { DEFAULT_TAIL_BYTES, S3Object } from './s3-object.js';
export { resolveS3Options, type ResolvedS3Options, type S3Options } from './s3-options.js';
export { READ_AHEAD_BYTES, registerS3, S3ByteSource, type S3SourceOptions } from './s3-byte-source.js';
export { type LocalCacheOptions, localCopy } from './local-cache.js';
