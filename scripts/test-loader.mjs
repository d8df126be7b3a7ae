/**
 * The TypeScript loader of `npm test`'s processes (scripts/test-lanes.mjs runs each test file
 * with `--import ./scripts/test-loader.mjs`): the same esbuild transform as tsx, on the same
 * tsconfig settings, but through Node's synchronous in-thread module hooks (module.registerHooks)
 * and with each file's output kept on disk by content. tsx's hooks run on a separate thread and
 * every import crosses to it and back: loading the server cost 1.3 s of CPU through tsx, 0.7 s
 * through this, in each of the suite's 155 test files. A file run alone by
 * `node --import tsx --test <file>` still runs through tsx; both give the same modules.
 *
 * Relative imports written `./x.js` (as TypeScript's NodeNext resolution wants them) resolve to
 * `./x.ts` when that exists; everything else resolves as Node resolves it. No test imports the
 * web UI's .tsx files (a browser runs them, built by vite), so this loader does not take them.
 * ALGOHOST_TEST_LOADER_CACHE names the directory of the transformed files (default: a folder in
 * the system's temporary directory); an entry's name is a hash of the file's path, its text and
 * the transform's settings, so an edited file is transformed again and nothing is ever stale.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { registerHooks } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { transformSync, version } from 'esbuild';

const tsconfig = JSON.parse(fs.readFileSync(new URL('../tsconfig.json', import.meta.url), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
/** What of tsconfig.json changes the emitted JavaScript (tsx passes the same to esbuild). */
const compilerOptions = {
  target: tsconfig.compilerOptions.target,
  verbatimModuleSyntax: tsconfig.compilerOptions.verbatimModuleSyntax,
  useDefineForClassFields: tsconfig.compilerOptions.useDefineForClassFields,
};
const settings = JSON.stringify({ version, compilerOptions });
const cacheDir = process.env.ALGOHOST_TEST_LOADER_CACHE || path.join(os.tmpdir(), `algohost-test-loader-${process.getuid?.() ?? 0}`);
fs.mkdirSync(cacheDir, { recursive: true });

const RELATIVE_JS = /^\.\.?\/.*\.js$/;

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (RELATIVE_JS.test(specifier) && context.parentURL?.startsWith('file:')) {
      const candidate = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
      if (fs.existsSync(candidate)) return { url: candidate.href, format: 'module', shortCircuit: true };
    }
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
    const file = fileURLToPath(url);
    const source = fs.readFileSync(file, 'utf8');
    const key = crypto.createHash('sha256').update(settings).update('\0').update(file).update('\0').update(source).digest('hex');
    const cached = path.join(cacheDir, `${key.slice(0, 40)}.js`);
    let code;
    try {
      code = fs.readFileSync(cached, 'utf8');
    } catch {
      code = transformSync(source, {
        loader: 'ts',
        format: 'esm',
        sourcemap: 'inline',
        sourcefile: file,
        tsconfigRaw: { compilerOptions },
      }).code;
      // Written aside, then renamed: a process reading it meanwhile sees all of it or nothing.
      const partial = `${cached}.${process.pid}.tmp`;
      fs.writeFileSync(partial, code);
      fs.renameSync(partial, cached);
    }
    return { format: 'module', source: code, shortCircuit: true };
  },
});
