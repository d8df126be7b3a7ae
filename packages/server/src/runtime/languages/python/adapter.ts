/**
 * Python: a virtual environment with `pip install -r requirements.txt` when the file lists
 * anything; then every module is byte-compiled, which also reports syntax errors as a failed
 * build with the compiler's message.
 */
import { INSIDE, type LanguageAdapter, type StepContext } from '../adapter.js';

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
};
