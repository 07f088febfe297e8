import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web player: Preact through esbuild's automatic JSX runtime (no Babel preset needed), built into
 * dist/player/web, which the server's `src/player/player-assets.ts` serves at `/` and `/player`.
 * `vite --config player/vite.config.ts` runs it in development against a running `vlink-bag serve`
 * (VLINK_SERVER, default http://127.0.0.1:8765) through the proxy below.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/player/',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/player/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/v1': { target: process.env.VLINK_SERVER ?? 'http://127.0.0.1:8765', ws: true } },
  },
});
