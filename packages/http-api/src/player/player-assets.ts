import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BagError } from '@vlink/bag';
import type { Env, Hono } from 'hono';

/** Where `vite build --config player/vite.config.ts` writes the page (dist/player/web, beside this module). */
export const PLAYER_ASSETS_DIR = fileURLToPath(new URL('./web/', import.meta.url));
/** The page is public (it holds no data; it asks for the token and sends it with each API call). */
export const isPlayerPath = (path: string): boolean =>
  path === '/' || path === '/player' || path.startsWith('/player/');

interface Asset {
  body: Uint8Array;
  type: string;
  /** Vite puts a content hash in every name under assets/: those never change and can be cached for good. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Same-origin only: the page talks to this server's /v1 API and replay WebSocket, nothing else. */
const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Reads the built player once, on the first request (a handful of files, about 100 KiB). A server started from a
 * `tsc`-only build has no player: `/` then keeps pointing at the API docs and `/player` says how to build it.
 */
function loadAssets(dir: string): Map<string, Asset> | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const rel = relative(dir, path).split(sep).join('/');
        assets.set(rel, {
          body: readFileSync(path),
          type: TYPES[extname(name)] ?? 'application/octet-stream',
          immutable: rel.startsWith('assets/'),
        });
      }
    }
  };
  walk(dir);
  return assets;
}

/** `/` and `/player` serve the web player's page; `/player/*` its assets. */
export function registerPlayer<E extends Env>(app: Hono<E>, dir: string = PLAYER_ASSETS_DIR): void {
  let assets: Map<string, Asset> | undefined | null = null;
  const get = () => (assets === null ? (assets = loadAssets(dir)) : assets);
  const send = (asset: Asset) =>
    new Response(asset.body as Uint8Array<ArrayBuffer>, {
      headers: {
        'content-type': asset.type,
        'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'x-content-type-options': 'nosniff',
        ...(asset.type.startsWith('text/html')
          ? { 'content-security-policy': PAGE_CSP, 'referrer-policy': 'no-referrer' }
          : {}),
      },
    });
  const page = () => {
    const index = get()?.get('index.html');
    if (!index)
      throw new BagError('NOT_SUPPORTED', 'the web player is not built: run `npm run build` in packages/http-api');
    return send(index);
  };

  app.get('/', (c) => (get() ? page() : c.redirect('/v1/docs', 302)));
  app.get('/player', page);
  app.get('/player/', page);
  app.get('/player/*', (c) => {
    const asset = get()?.get(c.req.path.slice('/player/'.length));
    return asset ? send(asset) : c.notFound();
  });
}
