/**
 * JavaScript (Node.js 20): `npm ci` when package-lock.json exists, else `npm install`, run on
 * copies of package.json (and the lock) in the layer, so node_modules lives at
 * /deps/node_modules; the artifact gets a `node_modules` symlink to it, so that `require` and
 * `import` resolve as usual wherever the runner mounts the layer at /deps. Then every
 * JavaScript file under src/ goes through `node --check`, which reports a SyntaxError with
 * file and line as a failed build.
 */
import fs from 'node:fs';
import { INSIDE, RUNNER_INSIDE, type BuildStep, type LanguageAdapter, type RunnerContext, type StepContext } from '../adapter.js';

const NODE = '/usr/bin/node';
const NPM = '/usr/bin/npm';
/**
 * Starts the harness with copies of its fds 1 and 2 as fds 8 and 9 (runner.cjs's SPARE_FDS): Node
 * cannot dup() a descriptor, and the harness writes its output marks through copies the
 * algorithm cannot close or redirect (close-on-exec in Node: the algorithm's subprocesses never get them).
 */
const WITH_OUTPUT_COPIES = ['/bin/sh', '-c', 'exec "$@" 8>&1 9>&2', 'sh'];
/** The system's CA store (it has any proxy's CA); Node alone trusts only its bundled list. */
const SYSTEM_CA = '/etc/ssl/certs/ca-certificates.crt';
/** Node trusts the system's CA bundle too when there is one (looked for once, when the module loads). */
// eslint-disable-next-line no-restricted-syntax -- start-up: module load
const SYSTEM_CA_ENV: Record<string, string> = fs.existsSync(SYSTEM_CA) ? { NODE_EXTRA_CA_CERTS: SYSTEM_CA } : {};
const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/** True unless package.json is absent or declares no dependency at all; unreadable JSON → true (npm reports it). */
function declaresDependencies(ctx: StepContext): boolean {
  const text = ctx.read('package.json');
  if (text === undefined) return false;
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch {
    return true;
  }
  if (!manifest || typeof manifest !== 'object') return true;
  return DEPENDENCY_FIELDS.some((field) => {
    const deps = (manifest as Record<string, unknown>)[field];
    return deps !== null && typeof deps === 'object' && Object.keys(deps).length > 0;
  });
}

export const javascriptAdapter: LanguageAdapter = {
  folder: 'javascript',
  languages: ['nodejs20'],
  dependencyFiles: ['package.json', 'package-lock.json'],

  /** runner/runner.cjs requires the entry once and marks each call's output; the artifact's node_modules links into the layer; runner/lib holds the client. */
  runner(ctx: RunnerContext) {
    return {
      argv: [...WITH_OUTPUT_COPIES, NODE, `${RUNNER_INSIDE.harness}/runner.cjs`],
      outputMarks: true,
      env: {
        ALGOHOST_ALGORITHM_NAME: ctx.algorithmName,
        // A fallback for trees that brought their own node_modules (then the build made no link),
        // then the harness's lib/, where require('algorithmia') finds the in-sandbox client.
        NODE_PATH: [...(ctx.hasLayer ? [`${RUNNER_INSIDE.deps}/node_modules`] : []), `${RUNNER_INSIDE.harness}/lib`].join(':'),
        ...SYSTEM_CA_ENV,
      },
    };
  },

  installDependencies(ctx: StepContext) {
    if (!declaresDependencies(ctx)) return [];
    const locked = ctx.files.has('package-lock.json') && ctx.read('package-lock.json') !== undefined;
    const files = locked ? ['package.json', 'package-lock.json'] : ['package.json'];
    const npm = [
      NPM,
      locked ? 'ci' : 'install',
      '--prefix',
      INSIDE.deps,
      '--cache',
      `${INSIDE.cache}/npm`,
      '--no-audit',
      '--no-fund',
      '--loglevel=warn',
    ];
    if (ctx.registries.npmRegistry) npm.push('--registry', ctx.registries.npmRegistry);
    return [
      {
        title: 'copy the package files into the layer',
        argv: ['/usr/bin/cp', '--', ...files.map((f) => `${INSIDE.src}/${f}`), `${INSIDE.deps}/`],
        network: false,
      },
      { title: locked ? 'npm ci' : 'npm install (no package-lock.json)', argv: npm, network: true },
    ];
  },

  compile(ctx: StepContext) {
    const steps: BuildStep[] = [];
    if (declaresDependencies(ctx) && !ctx.files.has('node_modules')) {
      steps.push({
        title: 'link node_modules to the dependency layer',
        argv: ['/usr/bin/ln', '-s', `${INSIDE.deps}/node_modules`, `${INSIDE.src}/node_modules`],
        network: false,
      });
    }
    // One `node --check` per file (it checks only its first argument); xargs fails if any does.
    const check = `[ -d src ] || exit 0; find src -type f \\( -name '*.js' -o -name '*.mjs' -o -name '*.cjs' \\) -not -path '*/node_modules/*' -print0 | xargs -0 -r -n 1 ${NODE} --check`;
    steps.push({ title: 'check the syntax of src/ (node --check)', argv: ['/bin/sh', '-c', check], network: false });
    return steps;
  },

  env() {
    return {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      ...SYSTEM_CA_ENV,
      npm_config_update_notifier: 'false',
    };
  },
};
