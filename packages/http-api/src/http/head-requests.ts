import type { MiddlewareHandler } from 'hono';

/**
 * Answers `HEAD` with the headers of the `GET` and no body, and cancels the body the `GET` route produced. hono runs a
 * HEAD as a GET and drops the body without reading or cancelling it, so a streaming route (messages as NDJSON or
 * binary) would keep its reader lease, open file and buffered chunks forever, one per HEAD. Cancelling the stream
 * runs the route's own cleanup, as when a client disconnects mid-stream. Registered first, so it sees the final
 * response, errors included.
 */
export function headRequests(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.req.method !== 'HEAD') return;
    const body = c.res.body;
    if (!body) return;
    // Not awaited: a route's cleanup must not hold up the answer; a stream already locked or failed is left as it is.
    if (!body.locked) void body.cancel().catch(() => undefined);
    c.res = new Response(null, { status: c.res.status, statusText: c.res.statusText, headers: c.res.headers });
  };
}
