/**
 * Push → build succeeded for a Python algorithm (no dependencies; unchanged dependencies),
 * against a plain `git push` of the same change to a bare repository on disk.
 * Budgets (docs/design/performance.md): ≤ 2 s without dependencies, ≤ 3 s with unchanged dependencies.
 * Run: node --import tsx bench/push-build.ts [iterations]
 */
import fs from 'node:fs';
import path from 'node:path';
import { benchUser, git, gitUrl, median, report, startAlgohost, tempDir, time, api } from './support.js';

const N = Number(process.argv[2] ?? 7);

const h = await startAlgohost();
try {
  const key = await benchUser(h, 'bench');
  const results: [string, string][] = [];
  for (const scenario of ['no dependencies', 'unchanged dependencies'] as const) {
    const name = scenario === 'no dependencies' ? 'NoDeps' : 'WithDeps';
    await api(h.url, key, 'POST', '/v1/algorithms/bench', { name });
    const work = tempDir('bench-clone-');
    const dir = path.join(work, 'w');
    git(['clone', '-q', gitUrl(h.url, 'bench', key, 'bench', name), dir]);
    const bare = path.join(work, 'plain.git');
    git(['init', '-q', '--bare', bare]);
    git(['remote', 'add', 'plain', bare], dir);
    git(['push', '-q', 'plain', 'HEAD:main'], dir);
    if (scenario === 'unchanged dependencies') {
      fs.writeFileSync(path.join(dir, 'requirements.txt'), 'six==1.17.0\n');
      git(['add', '-A'], dir);
      git(['commit', '-q', '-m', 'deps'], dir);
      git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], dir); // makes the layer once
    }
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < N; i++) {
      fs.appendFileSync(path.join(dir, 'src', `${name}.py`), `\n# change ${i}\n`);
      git(['commit', '-q', '-am', `change ${i}`], dir);
      base.push(time(() => git(['push', '-q', 'plain', 'HEAD:main'], dir)));
      let out = '';
      ours.push(time(() => (out = git(['push', '-o', 'wait', 'origin', 'HEAD:main'], dir) + '')));
      void out;
    }
    const builds = await api(h.url, key, 'GET', `/v1/algorithms/bench/${name}/builds?limit=${N}`);
    const failed = builds.results.filter((b: { status: string }) => b.status !== 'succeeded');
    if (failed.length) throw new Error(`${failed.length} builds did not succeed`);
    const budget = scenario === 'no dependencies' ? 2000 : 3000;
    const m = median(ours);
    results.push([
      `push → build succeeded, ${scenario} (median of ${N})`,
      `${m.toFixed(0)} ms (budget ${budget} ms: ${m <= budget ? 'met' : `missed by ${(m - budget).toFixed(0)} ms`})`,
    ]);
    results.push([`  plain git push to a bare repo (baseline)`, `${median(base).toFixed(0)} ms`]);
    results.push([`  ratio`, `${(m / median(base)).toFixed(1)}×`]);
    fs.rmSync(work, { recursive: true, force: true });
  }
  report(results);
} finally {
  await h.stop();
}
