import { errorResponse, HttpError } from '../http/errors.js';
import { internalErrorResponse } from '../http/internal-error.js';

/**
 * node-server's error handler: what it cannot turn into a `Request` is the client's mistake, answered as Bun and Deno
 * answer it. node-server builds the request URL from the `Host` header itself, before the app (and its Host check)
 * runs, and throws a `RequestError` on a Host that is no `host[:port]` (`127.0.0.1:80.`, port 99999, `a b`,
 * `x@evil.com`): that is a Host the server does not answer to (421, as the app's guard says on Bun and Deno). Other
 * request errors (a backslash in the path, a bad absolute URL) are malformed requests (400). Anything else escaped the
 * app: a plain 500.
 */
export function nodeErrorResponse(error: unknown): Response {
  // By name: each of node-server's bundles (index, listener) has a class of its own.
  if (!(error instanceof Error) || error.name !== 'RequestError') return internalErrorResponse();
  const message = error.message;
  const badUrl = (error.cause as { code?: unknown } | undefined)?.code === 'ERR_INVALID_URL';
  if (/host/i.test(message) || badUrl)
    return errorResponse(
      new HttpError('MISDIRECTED_REQUEST', 'this server does not answer to a malformed Host header'),
    );
  return errorResponse(new HttpError('INVALID_ARGUMENT', `malformed request: ${message}`));
}
