/**
 * Python: a virtual environment with `pip install -r requirements.txt` when the file lists
 * anything; then every module is byte-compiled, which also reports syntax errors as a failed
 * build with the compiler's message.
 *
 * Runner: runner/runner.py (standard library only) under the layer's venv Python when there is
 * one, so installed packages import; its lib/ (the `Algorithmia` package: ADK and the
 * in-algorithm client) comes before site-packages on the path.
 */
import { INSIDE, RUNNER_INSIDE, type LanguageAdapter, type RunnerContext, type StepContext } from '../adapter.js';

const PYTHON = '/usr/bin/python3';

export const pythonAdapter: LanguageAdapter = {
  folder: 'python',
  languages: ['python3', 'python2'],
  dependencyFiles: ['requirements.txt'],

  installDependencies(ctx: StepContext) {
    const requirements = ctx.read('requirements.txt') ?? '';
    // Only comments and blank lines: no virtual environment needed, which keeps builds fast.
    if (!requirements.split('\n').some((l) => l.trim() && !l.trim().startsWith('#'))) return [];
    const pip = [
      `${INSIDE.deps}/venv/bin/pip`,
      'install',
      '--no-input',
      '--disable-pip-version-check',
      '--cache-dir',
      `${INSIDE.cache}/pip`,
    ];
    if (ctx.registries.pipIndexUrl) pip.push('--index-url', ctx.registries.pipIndexUrl);
    for (const dir of ctx.extraInputs) pip.push('--find-links', dir);
    pip.push('-r', `${INSIDE.src}/requirements.txt`);
    return [
      { title: 'create the virtual environment', argv: [PYTHON, '-m', 'venv', `${INSIDE.deps}/venv`], network: false },
      { title: 'install requirements.txt', argv: pip, network: true },
    ];
  },

  compile() {
    return [{ title: 'byte-compile the sources', argv: [PYTHON, '-m', 'compileall', '-q', INSIDE.src], network: false }];
  },

  env() {
    return { PATH: '/usr/local/bin:/usr/bin:/bin', PYTHONUNBUFFERED: '1' };
  },

  runner(ctx: RunnerContext) {
    const python = ctx.hasLayer ? `${RUNNER_INSIDE.deps}/venv/bin/python` : PYTHON;
    return {
      // -u: what the algorithm prints reaches the service as it prints it, in order with stderr.
      argv: [python, '-u', `${RUNNER_INSIDE.harness}/runner.py`],
      outputMarks: true,
      env: {
        PATH: ctx.hasLayer ? `${RUNNER_INSIDE.deps}/venv/bin:/usr/local/bin:/usr/bin:/bin` : '/usr/local/bin:/usr/bin:/bin',
        // Subprocesses of the algorithm import Algorithmia too.
        PYTHONPATH: `${RUNNER_INSIDE.harness}/lib`,
        // The artifact and the harness are read-only.
        PYTHONDONTWRITEBYTECODE: '1',
        PYTHONNOUSERSITE: '1',
        // The harness reads algorithmia.conf; this is its fallback when the file has no algoname.
        ALGOHOST_ALGORITHM_NAME: typeof ctx.conf.algoname === 'string' && ctx.conf.algoname ? ctx.conf.algoname : ctx.algorithmName,
      },
    };
  },
};
