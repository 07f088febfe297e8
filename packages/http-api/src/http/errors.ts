import { BagError, type BagErrorCode } from '@vlink/bag';
import { HTTPException } from 'hono/http-exception';

/**
 * Codes the HTTP layer adds to the core's: authentication, a refused Origin or Host, unknown routes, WebSocket routes
 * hit without an upgrade, answers over the size limits, and bag work that ran past its deadline or lost its worker.
 */
export type HttpErrorCode =
  | BagErrorCode
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'MISDIRECTED_REQUEST'
  | 'ROUTE_NOT_FOUND'
  | 'UPGRADE_REQUIRED'
  | 'TOO_LARGE'
  | 'TIMEOUT'
  | 'UNAVAILABLE';

/** The JSON body of every error response: `{ error: { code, message } }`, never a stack. */
export interface ErrorBody {
  error: { code: HttpErrorCode; message: string };
}

/**
 * The one place BagError codes become HTTP statuses. A code missing here is a server fault (500), so a new core code
 * never leaks as a misleading 4xx.
 */
const STATUS: Partial<Record<HttpErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  QUERY_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  SCHEMA_CONFLICT: 409,
  TOO_LARGE: 413,
  UNSUPPORTED_FORMAT: 415,
  MISDIRECTED_REQUEST: 421,
  UPGRADE_REQUIRED: 426,
  CORRUPT_FILE: 422,
  CORRUPT_DATA: 422,
  VERSION_MISMATCH: 422,
  ABORTED: 499,
  NOT_SUPPORTED: 501,
  DRIVER_MISSING: 503,
  CLOSED: 503,
  QUEUE_FULL: 503,
  LIMIT_REACHED: 503,
  TIMEOUT: 503,
  UNAVAILABLE: 503,
  IO_ERROR: 500,
  INTERNAL: 500,
};

export function statusForCode(code: HttpErrorCode): number {
  return STATUS[code] ?? 500;
}

/** An error raised by the HTTP layer itself (auth, routing) with a code that is not a core BagError code. */
export class HttpError extends Error {
  constructor(
    readonly code: HttpErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * Keeps server paths out of what a client reads: text with the served root's real path in it is rewritten relative
 * to the root, and a file is named by its path inside the root or not at all.
 */
export interface PathScrubber {
  text(text: string): string;
  /** The path relative to the root (`runs/drive.vdb`), or undefined when it is outside the root. */
  path(path: string): string | undefined;
}

export function pathScrubber(realRoot: string): PathScrubber {
  const prefix = realRoot.endsWith('/') || realRoot.endsWith('\\') ? realRoot : `${realRoot}/`;
  return {
    text: (text) => text.split(prefix).join('').split(realRoot).join('.'),
    path: (path) => (path.startsWith(prefix) ? path.slice(prefix.length).split('\\').join('/') : undefined),
  };
}

const NO_PATHS: PathScrubber = { text: (t) => t, path: () => undefined };

/**
 * What a client may read of a BagError: its `reason` (our own text, without a wrapped driver's or OS's message),
 * then the context that names no server path: the file relative to the root, the offset, the url.
 */
export function clientMessage(error: BagError, scrub: PathScrubber = NO_PATHS): string {
  // `reason` is absent on errors from an older installed copy of core: then only the root is scrubbed.
  const reason = (error as { reason?: string }).reason;
  if (reason === undefined) return scrub.text(error.message);
  const context: string[] = [];
  const file = error.file === undefined ? undefined : scrub.path(error.file);
  if (file !== undefined) context.push(`file ${file}`);
  if (error.offset !== undefined) context.push(`offset ${error.offset}`);
  if (error.url !== undefined) context.push(`url ${error.url}`);
  const text = scrub.text(reason);
  return context.length === 0 ? text : `${text} (${context.join(', ')})`;
}

/**
 * Turns anything thrown into a status and a body: the one place a client's view of an error is decided. BagErrors
 * keep their code and `clientMessage`, HttpErrors their own text; anything else is an internal error whose message
 * is not exposed. No stack, no absolute path, no library message ever reaches the body.
 */
export function toErrorResponse(error: unknown, scrub: PathScrubber = NO_PATHS): { status: number; body: ErrorBody } {
  if (error instanceof HttpError) {
    return {
      status: statusForCode(error.code),
      body: { error: { code: error.code, message: scrub.text(error.message) } },
    };
  }
  if (BagError.isInstance(error)) {
    const code = error.code as HttpErrorCode;
    return { status: statusForCode(code), body: { error: { code, message: clientMessage(error, scrub) } } };
  }
  if (error instanceof HTTPException) {
    // Raised by hono itself (e.g. a malformed request); keep its status, name it with our codes.
    const code: HttpErrorCode =
      error.status === 401 ? 'UNAUTHORIZED' : error.status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
    return {
      status: error.status,
      body: {
        error: { code, message: error.status >= 500 ? 'internal server error' : error.message || 'bad request' },
      },
    };
  }
  return { status: 500, body: { error: { code: 'INTERNAL', message: 'internal server error' } } };
}

/** A plain JSON error response, for the adapters' own error handlers (outside hono's `onError`). */
export function errorResponse(error: unknown, scrub?: PathScrubber): Response {
  const { status, body } = toErrorResponse(error, scrub);
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

export function badParameter(name: string, detail: string): BagError {
  return new BagError('INVALID_ARGUMENT', `invalid query parameter "${name}": ${detail}`);
}
