import { cors as honoCors } from 'hono/cors';
import type { MiddlewareHandler } from 'hono';

export type CorsOptions = NonNullable<Parameters<typeof honoCors>[0]>;

/** `true` → any origin; a string or list → those origins; an object → hono's cors options as they are. */
export function cors(option: true | string | string[] | CorsOptions): MiddlewareHandler {
  if (option === true)
    return honoCors({
      origin: '*',
      allowHeaders: ['Authorization', 'Content-Type'],
      exposeHeaders: ['X-Vlink-Frame-Layout'],
    });
  if (typeof option === 'string' || Array.isArray(option)) {
    return honoCors({
      origin: option,
      allowHeaders: ['Authorization', 'Content-Type'],
      exposeHeaders: ['X-Vlink-Frame-Layout'],
    });
  }
  return honoCors(option);
}
