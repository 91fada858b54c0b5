import { createReadStream, createWriteStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { APPS, NONCE_PLACEHOLDER, WEB_BASE } from './apps.js';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Writes .br and .gz next to every script and stylesheet, so the server (@fastify/static with
 * `preCompressed`) answers compressed bytes without compressing per request.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'patchbay-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir;
    },
    async closeBundle() {
      const assets = join(outDir, 'assets');
      const files = readdirSync(assets).filter((f) => /\.(js|css|svg|json)$/.test(f) && statSync(join(assets, f)).size > 1024);
      await Promise.all(
        files.flatMap((file) => [
          pipeline(createReadStream(join(assets, file)), createGzip({ level: 9 }), createWriteStream(join(assets, `${file}.gz`))),
          pipeline(
            createReadStream(join(assets, file)),
            createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
            createWriteStream(join(assets, `${file}.br`)),
          ),
        ]),
      );
    },
  };
}

export default defineConfig({
  root,
  base: WEB_BASE,
  plugins: [react(), precompress()],
  // Every <script>, <style> and <link> Vite writes carries this nonce, and a <meta property="csp-nonce">
  // tells Mantine and Vite's dev client which nonce their runtime <style> tags need.
  html: { cspNonce: NONCE_PLACEHOLDER },
  build: {
    outDir: join(root, 'dist'),
    emptyOutDir: true,
    assetsDir: 'assets',
    manifest: true,
    sourcemap: false,
    target: 'es2022',
    // The budget that matters is gzipped initial JavaScript per app (npm run bench -- web); the shared
    // React + Mantine chunk is over Rollup's 500 kB minified default by design.
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      input: Object.fromEntries(APPS.map((app) => [app, join(root, app, 'index.html')])),
    },
  },
  server: { strictPort: true },
  clearScreen: false,
});
