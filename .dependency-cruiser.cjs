/**
 * The dependency rule of ARCHITECTURE.md ("Layers and the dependency rule"), checked in CI by
 * `npm run depcheck` (scripts/test.sh). Only packages/server/src is cruised: tests and scripts
 * may import anything, main/ included. Type-only imports count like any other.
 *
 *   main/  ──▶  api/ · cluster/ · events/ · git/ · jobs/ · runtime/ · scm/ · storage/  ──▶  domain/ (and lib/)
 */
const SRC = '^packages/server/src/';

module.exports = {
  forbidden: [
    {
      name: 'domain-imports-only-domain-and-lib',
      comment:
        'domain/ holds the rules and the ports: it imports nothing outside domain/ and lib/ (no adapter, ' +
        'no npm package but the small pure ones listed here: jose for session tokens, lru-cache; Node ' +
        'built-ins are allowed). Move the need behind a port that domain/ owns.',
      severity: 'error',
      from: { path: `${SRC}domain/` },
      to: { pathNot: [`${SRC}(domain|lib)/`, '^node_modules/(jose|lru-cache)/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'adapters-import-only-domain-and-lib',
      comment:
        'api/, cluster/, events/, git/, runtime/, scm/ and storage/ may import their own folder, domain/ and lib/; they meet ' +
        'each other (and config/) only in the composition root, main/. (main/ itself: see no-importing-main.)',
      severity: 'error',
      from: { path: `${SRC}(api|cluster|events|git|runtime|scm|storage)/` },
      to: { path: SRC, pathNot: `${SRC}($1|domain|lib|main)/` },
    },
    {
      name: 'jobs-import-only-domain',
      comment:
        'jobs/ declares and runs background work by calling domain services; it imports only jobs/, domain/ ' +
        'and lib/. An adapter a job needs (the runner pool) is passed in by main/ behind an interface jobs/ declares.',
      severity: 'error',
      from: { path: `${SRC}jobs/` },
      to: { path: SRC, pathNot: `${SRC}(jobs|domain|lib)/` },
    },
    {
      name: 'no-importing-main',
      comment: 'main/ is the composition root: nothing imports it except main/ itself (tests and scripts may).',
      severity: 'error',
      from: { path: SRC, pathNot: `${SRC}main/` },
      to: { path: `${SRC}main/` },
    },
    {
      name: 'no-circular-in-domain',
      comment: 'Modules of domain/ must not depend on each other in a cycle.',
      severity: 'error',
      from: { path: `${SRC}domain/` },
      to: { path: `${SRC}domain/`, circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
