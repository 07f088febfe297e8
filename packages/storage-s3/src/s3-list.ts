import type { S3Client } from './s3-client.js';

/** One object of a listing. */
export interface S3ListedObject {
  key: string;
  size: number;
  /** `LastModified`, ms since the Unix epoch. */
  mtimeMs: number;
  etag: string;
}

/** A listing this long is not a folder of recordings (the same bound `serve` has for a local tree). */
const MAX_OBJECTS = 100_000;

/**
 * Every object of `bucket` whose key starts with `prefix` (ListObjectsV2, 1000 a page, followed to the end or to
 * 100 000 objects). The answer is XML; its few fields are read with patterns rather than an XML library.
 */
export async function listObjects(client: S3Client, bucket: string, prefix: string): Promise<S3ListedObject[]> {
  const out: S3ListedObject[] = [];
  let token: string | undefined;
  do {
    const query: Record<string, string> = { 'list-type': '2', prefix };
    if (token) query['continuation-token'] = token;
    const xml = await client.getText(client.bucketUrl(bucket, query), `s3://${bucket}/${prefix}`);
    for (const [, body] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
      out.push({
        key: xmlText(field(body!, 'Key')),
        size: Number(field(body!, 'Size')),
        mtimeMs: Date.parse(field(body!, 'LastModified')) || 0,
        etag: xmlText(field(body!, 'ETag')),
      });
    }
    token = /<IsTruncated>true<\/IsTruncated>/.test(xml) ? xmlText(field(xml, 'NextContinuationToken')) : undefined;
  } while (token && out.length < MAX_OBJECTS);
  return out;
}

function field(xml: string, name: string): string {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';
}

/** The five XML escapes and numeric character references, as S3 writes them in keys. */
function xmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (entity[0] !== '#') return named[entity.toLowerCase()]!;
    const code =
      entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return String.fromCodePoint(code);
  });
}
