/**
 * What an adapter answers for an error that escaped the app (hono's `onError` handles everything a route throws):
 * a fixed JSON 500, never the runtime's default page, which shows the error's message or stack (Bun in development
 * mode, node-server's `Error: …` text).
 */
export function internalErrorResponse(): Response {
  return new Response(JSON.stringify({ error: { code: 'INTERNAL', message: 'internal server error' } }), {
    status: 500,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}
