import { BagError } from '@vlink/bag-core';

/** Where and as whom to reach S3-compatible storage; every field falls back to the usual `AWS_*` variable. */
export interface S3Options {
  /** `AWS_ENDPOINT_URL_S3`, then `AWS_ENDPOINT_URL`; absent: AWS itself (`https://s3.<region>.amazonaws.com`). */
  endpoint?: string;
  /** `AWS_REGION`, then `AWS_DEFAULT_REGION`, then `us-east-1`. */
  region?: string;
  /** `AWS_ACCESS_KEY_ID`. */
  accessKeyId?: string;
  /** `AWS_SECRET_ACCESS_KEY`. */
  secretAccessKey?: string;
  /** `AWS_SESSION_TOKEN` (temporary credentials). */
  sessionToken?: string;
  /**
   * Address buckets as `<endpoint>/<bucket>/<key>` (default when an endpoint is given: MinIO, SeaweedFS, moto…)
   * rather than `<bucket>.<endpoint>/<key>` (default for AWS). `AWS_S3_FORCE_PATH_STYLE=true` forces it.
   */
  forcePathStyle?: boolean;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface ResolvedS3Options {
  endpoint: URL;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string | undefined;
  pathStyle: boolean;
  fetch: typeof fetch;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The process environment where the runtime has one (Node, Bun, Deno's Node compatibility); empty otherwise. */
function processEnv(): Env {
  return (globalThis as { process?: { env?: Env } }).process?.env ?? {};
}

/** Options first, then the environment; credentials are required (anonymous reads are not supported yet). */
export function resolveS3Options(options: S3Options = {}, env: Env = processEnv()): ResolvedS3Options {
  const region = options.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
  const endpointText = options.endpoint ?? env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  let endpoint: URL;
  try {
    endpoint = new URL(endpointText ?? `https://s3.${region}.amazonaws.com`);
  } catch (error) {
    throw BagError.wrap(error, 'INVALID_ARGUMENT', `not an endpoint url: ${endpointText}`);
  }
  const accessKeyId = options.accessKeyId ?? env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = options.secretAccessKey ?? env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) {
    throw new BagError(
      'INVALID_ARGUMENT',
      'S3 credentials missing: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or pass accessKeyId/secretAccessKey)',
    );
  }
  const forced = options.forcePathStyle ?? (env['AWS_S3_FORCE_PATH_STYLE'] === 'true' ? true : undefined);
  return {
    endpoint,
    region,
    accessKeyId,
    secretAccessKey,
    sessionToken: options.sessionToken ?? env['AWS_SESSION_TOKEN'],
    pathStyle: forced ?? endpointText !== undefined,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
  };
}
