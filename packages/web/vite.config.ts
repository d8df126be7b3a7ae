/**
 * Vite builds the app into dist/ (index.html + hashed assets the server serves at /), and in
 * dev mode (`npm run dev -w @algohost/web`) serves it with hot reload, proxying the API and
 * Git to a running algohost node (ALGOHOST_URL, default http://127.0.0.1:8080), so the app
 * talks to the same origin in both modes.
 */
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const target = process.env.ALGOHOST_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The server's Content-Security-Policy allows scripts from 'self' only: no inline module
    // preload polyfill (every browser the app targets supports modulepreload).
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    proxy: {
      '/v1': { target, changeOrigin: true },
      '/git': { target, changeOrigin: true },
    },
  },
});
