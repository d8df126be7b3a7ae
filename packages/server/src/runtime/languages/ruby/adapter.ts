/**
 * Ruby (3.1, Debian's Bundler): the Gemfile (and Gemfile.lock) are copied into the layer and
 * `bundle install` puts the gems under /deps/bundle. Gems vendored in vendor/cache install with
 * `bundle install --local` and no network (all of them must be there, as `bundle cache` leaves
 * them); without vendor/cache they come from the Gemfile's source, or from the cluster's gem
 * source (ALGOHOST_GEM_SOURCE, a Bundler mirror of every source). The artifact gets the
 * Gemfile.lock that was installed and a `.bundle/config` pointing at /deps/bundle, so
 * `require "bundler/setup"` in the runner finds the gems with no extra settings (a Gemfile
 * without gems gets a lock too: Bundler would write it at run time, in a read-only tree).
 * Every .rb file then goes through `ruby -wc`, which reports syntax errors.
 */
import { INSIDE, RUNNER_INSIDE, type BuildStep, type LanguageAdapter, type RunnerContext, type StepContext } from '../adapter.js';

const RUBY = '/usr/bin/ruby';
const BUNDLE = '/usr/bin/bundle';
const SH = '/bin/sh';
/** The copy of the Gemfile the layer is made from (Bundler writes its lock next to it). */
const APP = `${INSIDE.deps}/app`;
const GEMS = `${INSIDE.deps}/bundle`;

/** Whether the Gemfile names any gem (a `gem` or `gemspec` line outside comments). */
function declaresGems(ctx: StepContext): boolean {
  const gemfile = ctx.read('Gemfile');
  if (gemfile === undefined) return false;
  return gemfile.split('\n').some((line) => /^\s*(gem|gemspec)\b/.test(line));
}

/** Settings of the install steps: Bundler works on the copy in the layer, never on the read-only tree. */
function installEnv(ctx: StepContext): Record<string, string> {
  return {
    BUNDLE_GEMFILE: `${APP}/Gemfile`,
    BUNDLE_APP_CONFIG: `${APP}/.bundle`,
    BUNDLE_PATH: GEMS,
    // Vendored gems are read where they are (and, with --no-cache, never written back: the tree is read-only).
    BUNDLE_CACHE_PATH: `${INSIDE.src}/vendor/cache`,
    BUNDLE_USER_CACHE: `${INSIDE.cache}/bundler`,
    ...(ctx.registries.gemSource ? { BUNDLE_MIRROR__ALL: ctx.registries.gemSource } : {}),
  };
}

export const rubyAdapter: LanguageAdapter = {
  folder: 'ruby',
  languages: ['ruby3'],
  dependencyFiles: ['Gemfile', 'Gemfile.lock'],

  /** runner/runner.rb (marks each call's output): `require "bundler/setup"` finds the gems through the artifact's .bundle/config. */
  runner(ctx: RunnerContext) {
    return { argv: [RUBY, `${RUNNER_INSIDE.harness}/runner.rb`], outputMarks: true, env: { ALGOHOST_ALGORITHM_NAME: ctx.algorithmName } };
  },

  installDependencies(ctx: StepContext) {
    if (!declaresGems(ctx)) return [];
    const env = installEnv(ctx);
    const copy = `mkdir -p ${APP} && cp Gemfile ${APP}/Gemfile && if [ -f Gemfile.lock ]; then cp Gemfile.lock ${APP}/Gemfile.lock; fi`;
    const steps: BuildStep[] = [{ title: 'copy the Gemfile into the layer', argv: [SH, '-c', copy], network: false }];
    if (ctx.files.has('vendor')) {
      const local = `if [ -d vendor/cache ]; then exec ${BUNDLE} install --local --no-cache; else echo "no vendor/cache: gems come from the source"; fi`;
      steps.push({
        title: 'bundle install --local (gems vendored in vendor/cache, no network)',
        argv: [SH, '-c', local],
        env,
        network: false,
      });
      // Reached with the network only when vendor/ has no cache (a partial vendor/cache fails above, naming the gem).
      const rest = `if ${BUNDLE} check >/dev/null 2>&1; then echo "The Gemfile's dependencies are satisfied"; else exec ${BUNDLE} install --no-cache; fi`;
      steps.push({ title: 'bundle install', argv: [SH, '-c', rest], env, network: true });
    } else {
      steps.push({ title: 'bundle install', argv: [BUNDLE, 'install', '--no-cache'], env, network: true });
    }
    return steps;
  },

  compile(ctx: StepContext) {
    const steps: BuildStep[] = [];
    const env = { BUNDLE_GEMFILE: `${INSIDE.src}/Gemfile` };
    if (declaresGems(ctx)) {
      const pin = `cp ${APP}/Gemfile.lock Gemfile.lock && ${BUNDLE} config set --local path ${GEMS}`;
      steps.push({ title: 'point Bundler at the installed gems', argv: [SH, '-c', pin], env, network: false });
    } else if (ctx.files.has('Gemfile')) {
      // `require "bundler/setup"` would write a missing lock at run time, in a read-only tree.
      steps.push({ title: 'write Gemfile.lock', argv: [BUNDLE, 'lock', '--local'], env, network: false });
    }
    // `ruby -c` checks only its first file: one call per file, xargs fails if any does.
    const check = `find . -type f -name '*.rb' -not -path './vendor/*' -not -path './.bundle/*' -print0 | xargs -0 -r -n 1 ${RUBY} -wc >/dev/null && echo "Syntax OK"`;
    steps.push({ title: 'check the syntax of every .rb file (ruby -wc)', argv: [SH, '-c', check], network: false });
    return steps;
  },

  env() {
    return { PATH: '/usr/local/bin:/usr/bin:/bin' };
  },
};
