import { BagError, type BagErrorCode } from '@vlink/bag';
import { HTTPException } from 'hono/http-exception';

/** Codes the HTTP layer adds to the core's: authentication, unknown routes, WebSocket routes hit without an upgrade. */
export type HttpErrorCode = BagErrorCode | 'UNAUTHORIZED' | 'ROUTE_NOT_FOUND' | 'UPGRADE_REQUIRED';

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
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  SCHEMA_CONFLICT: 409,
  UNSUPPORTED_FORMAT: 415,
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
 * Turns anything thrown into a status and a body. BagError and HttpError messages are kept with server paths made
 * relative to the served root (`scrub`); anything else is an internal error whose message is not exposed.
 */
export function toErrorResponse(
  error: unknown,
  scrub: (text: string) => string = (t) => t,
): { status: number; body: ErrorBody } {
  if (BagError.isInstance(error) || error instanceof HttpError) {
    const code = error.code as HttpErrorCode;
    return { status: statusForCode(code), body: { error: { code, message: scrub(error.message) } } };
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

export function badParameter(name: string, detail: string): BagError {
  return new BagError('INVALID_ARGUMENT', `invalid query parameter "${name}": ${detail}`);
}
