import { ErrorSchema } from './schemas.js';

/** What each error status means on this API; every route documents its errors with these words. */
const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed parameter (the message names it)',
  401: 'Missing or wrong bearer token',
  403: 'A browser Origin that is neither the server’s own nor allowed (--allow-origin)',
  404: 'No such bag under the root (also for paths leaving the root)',
  413: 'The answer would be over a size limit (the message says which and how much)',
  415: 'Not a supported bag format',
  421: 'A Host the server does not answer to (DNS rebinding; --allow-host adds names)',
  422: 'Corrupt, incompatible or refused bag (e.g. a .vdb with views or triggers, a segment outside the root)',
  426: 'WebSocket route called without an upgrade',
  501: 'Not supported by this server build',
  503: 'TIMEOUT: the bag work ran past its deadline (or the bag hung a worker before); UNAVAILABLE: its worker was lost',
};

/** OpenAPI `responses` entries for error statuses: the `{ error: { code, message } }` body. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      { description: ERROR_TEXT[s] ?? 'error', content: { 'application/json': { schema: ErrorSchema } } },
    ]),
  );

/** The errors any route reading one bag can answer. */
export const bagErrorResponses = errorResponses(400, 401, 403, 404, 413, 415, 421, 422, 503);
