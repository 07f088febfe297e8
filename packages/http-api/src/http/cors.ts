import { BagError } from '@vlink/bag';
import type { MiddlewareHandler } from 'hono';
import { cors as honoCors } from 'hono/cors';

export type CorsOptions = NonNullable<Parameters<typeof honoCors>[0]>;
export type CorsOption = boolean | string | string[] | CorsOptions;

const HEADERS = {
  allowHeaders: ['Authorization', 'Content-Type'],
  exposeHeaders: ['X-Vlink-Frame-Layout'],
};

/**
 * The CORS middleware, or undefined when CORS is off. `true` answers the allowed origins (`allowOrigins`); with none
 * listed it means any origin, which is refused without a token: on a token-less server any page could then read
 * every bag. A string or list names the origins; an object is hono's cors options as they are.
 */
export function corsMiddleware(
  option: CorsOption | undefined,
  allowOrigins: readonly string[],
  hasToken: boolean,
): MiddlewareHandler | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) {
    if (allowOrigins.length > 0) return honoCors({ origin: [...allowOrigins], ...HEADERS });
    if (!hasToken)
      throw new BagError(
        'INVALID_ARGUMENT',
        'cors: true without a token would let any web page read every bag: list the origins (allowOrigins / --allow-origin) or set a token',
      );
    return honoCors({ origin: '*', ...HEADERS });
  }
  if (corsAnyOrigin(option, allowOrigins) && !hasToken)
    throw new BagError('INVALID_ARGUMENT', 'a CORS origin of * needs a token: list the origins or set a token');
  if (typeof option === 'string' || Array.isArray(option)) return honoCors({ origin: option, ...HEADERS });
  return honoCors(option);
}

/** The origins a `cors` option names (they are allowed by the Origin check too). */
export function corsOrigins(option: CorsOption | undefined): string[] {
  if (typeof option === 'string') return [option];
  if (Array.isArray(option)) return option;
  if (option && typeof option === 'object') {
    const origin = option.origin;
    if (typeof origin === 'string' && origin !== '*') return [origin];
    if (Array.isArray(origin)) return origin;
  }
  return [];
}

/** Whether the option lets any origin read (`*`): only then do plain requests from unlisted origins pass. */
export function corsAnyOrigin(option: CorsOption | undefined, allowOrigins: readonly string[]): boolean {
  if (option === true) return allowOrigins.length === 0;
  if (typeof option === 'string') return option === '*';
  if (Array.isArray(option)) return option.includes('*');
  return typeof option === 'object' && option.origin === '*';
}
