import { registerUrlScheme } from '@vlink/bag-core';
import { S3ByteSource, type S3SourceOptions } from './s3-byte-source.js';
import { S3Client } from './s3-client.js';
import { listObjects } from './s3-list.js';
import { parseS3Prefix } from './s3-location.js';
import { stageS3, type StagingOptions } from './s3-staging.js';

/** Everything `registerS3` takes: where and as whom, the read cache, and the upload's staging and part size. */
export type RegisterS3Options = S3SourceOptions & StagingOptions;

/**
 * Makes `s3://` urls a place for bags: `BagReader.create('s3://bucket/key.vcap')` reads by range requests, listing a
 * prefix finds its bags (`vlink-bag serve s3://bucket/prefix`), and `BagWriter.create('s3://…')` writes a local
 * staging copy uploaded per segment and at close. Options as `S3Options`, else the `AWS_*` variables.
 */
export function registerS3(options: RegisterS3Options = {}): void {
  let client: S3Client | undefined;
  const shared = (): S3Client => (client ??= new S3Client(options));
  registerUrlScheme('s3', {
    open: (url) => S3ByteSource.open(url, options),
    openSync: (url) => S3ByteSource.openSync(url, options),
    async list(prefix) {
      const { bucket, key } = parseS3Prefix(prefix);
      const objects = await listObjects(shared(), bucket, key);
      return objects.map((o) => ({ url: `s3://${bucket}/${o.key}`, size: o.size, mtimeMs: o.mtimeMs }));
    },
    stage: async (url) => stageS3(shared(), url, options),
  });
}
