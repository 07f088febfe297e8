import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import type { S3Client } from './s3-client.js';
import type { S3Location } from './s3-location.js';

/** S3's smallest part (all but the last part of a multipart upload must be at least this big). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** Default part size: one part in memory at a time, so uploading costs 8 MiB whatever the recording's size. */
export const DEFAULT_PART_BYTES = 8 * 1024 * 1024;

export interface UploadOptions {
  /** Bytes per part (≥ 5 MiB); a file no bigger than one part goes up in one PUT. Default 8 MiB. */
  partBytes?: number;
}

/**
 * Uploads a local file to `location` so that the object is either the whole file or absent: one PUT for a file of at
 * most one part (S3 stores a PUT whole or not at all), else a multipart upload whose parts are read one at a time
 * and which is completed only after every part arrived. Any failure aborts the multipart upload (S3 then frees the
 * parts and never shows the object) and rejects with the cause.
 */
export async function uploadFile(
  client: S3Client,
  localPath: string,
  location: S3Location,
  options: UploadOptions = {},
): Promise<void> {
  const partBytes = Math.max(MIN_PART_BYTES, options.partBytes ?? DEFAULT_PART_BYTES);
  const fd = openSync(localPath, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size <= partBytes) {
      await client.put(location, readPart(fd, 0, size));
      return;
    }
    await multipartUpload(client, fd, size, partBytes, location);
  } finally {
    closeSync(fd);
  }
}

async function multipartUpload(
  client: S3Client,
  fd: number,
  size: number,
  partBytes: number,
  location: S3Location,
): Promise<void> {
  const file = `s3://${location.bucket}/${location.key}`;
  const created = await (await client.request(location, { method: 'POST' }, { uploads: '' })).text();
  const uploadId = xmlField(created, 'UploadId');
  if (!uploadId) throw new BagError('IO_ERROR', 'S3 started a multipart upload without an UploadId', { file });
  try {
    const etags: string[] = [];
    for (let offset = 0, part = 1; offset < size; offset += partBytes, part++) {
      const body = readPart(fd, offset, Math.min(partBytes, size - offset));
      const answer = await client.request(
        location,
        { method: 'PUT', body: body.buffer as ArrayBuffer },
        { partNumber: String(part), uploadId },
      );
      await answer.arrayBuffer();
      const etag = answer.headers.get('etag');
      if (!etag) throw new BagError('IO_ERROR', `S3 accepted part ${part} without an ETag`, { file });
      etags.push(etag);
    }
    const parts = etags.map(
      (etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${xmlEscape(etag)}</ETag></Part>`,
    );
    const body = `<CompleteMultipartUpload>${parts.join('')}</CompleteMultipartUpload>`;
    const answer = await (await client.request(location, { method: 'POST', body }, { uploadId })).text();
    // CompleteMultipartUpload may answer 200 and still fail: the error is then in the body.
    if (/<Error>/.test(answer))
      throw new BagError(
        'IO_ERROR',
        `S3 did not complete the upload: ${xmlField(answer, 'Code')} ${xmlField(answer, 'Message')}`,
        {
          file,
        },
      );
  } catch (error) {
    const aborted = await client.request(location, { method: 'DELETE' }, { uploadId }).then(
      async (r) => void (await r.arrayBuffer()),
      (abortError: unknown) => abortError,
    );
    const note = aborted === undefined ? 'aborted' : `and could not be aborted (${String(aborted)})`;
    const code = BagError.isInstance(error) ? error.code : 'IO_ERROR';
    const detail = error instanceof Error ? error.message : String(error);
    throw new BagError(code, `multipart upload ${note}: ${detail}`, { file, cause: error });
  }
}

function readPart(fd: number, offset: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, bytes, done, length - done, offset + done);
    if (n === 0) throw new BagError('IO_ERROR', `the file ended ${length - done} bytes early while uploading`);
    done += n;
  }
  return bytes;
}

function xmlField(xml: string, name: string): string {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
