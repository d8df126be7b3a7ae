/**
 * Writes `<file>.br` and `<file>.gz` beside every text file of the built web UI (HTML, JS, CSS,
 * SVG, JSON), each at its slowest, smallest setting: made once here, they cost the server
 * nothing per answer (packages/server/src/api/web-app.ts serves the copy the client accepts).
 * A copy no smaller than its file is not written: the server then sends the file.
 * Run by scripts/build-web.sh after Vite (not a Vite plugin: brotli's best setting takes a
 * second of the build, which the bundler reports as a slow plugin on every build).
 * Usage: node --import tsx scripts/precompress-web.ts [dist directory]
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** The files the server looks for copies of (PRECOMPRESSED_TYPES in packages/server/src/api/web-app.ts). */
const TEXT_FILE = /\.(?:html|js|css|svg|json)$/;
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

const dist = process.argv[2] ?? fileURLToPath(new URL('../packages/web/dist', import.meta.url));

async function precompress(file: string): Promise<void> {
  const bytes = await fs.readFile(file);
  const [br, gz] = await Promise.all([
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
    gzip(bytes, { level: zlib.constants.Z_BEST_COMPRESSION }),
  ]);
  for (const [suffix, copy] of [
    ['.br', br],
    ['.gz', gz],
  ] as const) {
    // A copy left by an earlier build of the same name would be served in its place.
    if (copy.length < bytes.length) await fs.writeFile(file + suffix, copy);
    else await fs.rm(file + suffix, { force: true });
  }
}

const files = (await fs.readdir(dist, { recursive: true })).filter((f) => TEXT_FILE.test(f)).map((f) => path.join(dist, f));
if (!files.some((f) => path.basename(f) === 'index.html')) {
  console.error(`${dist} holds no index.html: build the web UI first (bash scripts/build-web.sh)`);
  process.exit(1);
}
await Promise.all(files.map(precompress));
