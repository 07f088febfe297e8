import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web player: Preact through esbuild's automatic JSX runtime (no Babel preset needed), built into
 * dist/player/web, which the server's `src/player/player-assets.ts` serves at `/` and `/player`.
 * `vite --config player/vite.config.ts` runs it in development against a running `vlink-bag serve`
 * (VLINK_SERVER, default http://127.0.0.1:8765) through the proxy below.
 */
const server = process.env.VLINK_SERVER ?? 'http://127.0.0.1:8765';

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
    proxy: {
      '/v1': {
        target: server,
        ws: true,
        // The server answers only its own Host and Origin (DNS rebinding, foreign pages): the dev proxy, a local
        // tool the developer runs, presents its requests as the server's own.
        changeOrigin: true,
        configure: (proxy) => {
          const origin = new URL(server).origin;
          proxy.on('proxyReq', (request) => request.getHeader('origin') && request.setHeader('origin', origin));
          proxy.on('proxyReqWs', (request) => request.setHeader('origin', origin));
        },
      },
    },
  },
});
