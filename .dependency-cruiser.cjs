/**
 * The dependency rule of ARCHITECTURE.md ("Layers and the dependency rule"), checked in CI by
 * `npm run depcheck` (scripts/test.sh). Only packages/server/src is cruised: tests and scripts
 * may import anything, main/ included. Type-only imports count like any other.
 *
 *   main/  ──▶  api/ · cluster/ · events/ · git/ · jobs/ · runtime/ · scm/ · storage/  ──▶  domain/ (and lib/)
 */
const SRC = '^packages/server/src/';

/**
 * The areas of domain/ (its folders) and the areas each may import; any other edge between two
 * areas fails, and the allowed edges may form no cycle (checked below, when this file loads). The
 * modules at the root of domain/ (errors, clock, names, pagination, …) are shared by every area.
 *
 * events and calls: events may import calls (it calls algorithms for a flow's deliveries, and it
 * hears about finished calls through a port calls owns); calls never imports events.
 */
const DOMAIN_AREAS = {
  accounts: [],
  catalog: [],
  audit: ['accounts'],
  cluster: ['accounts'],
  algorithms: ['accounts', 'catalog'],
  data: ['accounts', 'algorithms'],
  builds: ['accounts', 'algorithms', 'catalog'],
  versions: ['accounts', 'algorithms', 'builds'],
  scm: ['accounts', 'algorithms', 'builds'],
  'algorithm-objects': ['accounts', 'algorithms', 'builds', 'catalog', 'scm', 'versions'],
  insights: ['accounts', 'calls', 'events'],
  calls: ['accounts', 'algorithms', 'catalog', 'versions'],
  events: ['accounts', 'algorithms', 'calls', 'versions'],
};

for (const [area, allowed] of Object.entries(DOMAIN_AREAS)) {
  for (const other of allowed) {
    if (!(other in DOMAIN_AREAS)) throw new Error(`.dependency-cruiser.cjs: ${area} may import ${other}, which is not an area`);
  }
}
// The allowed edges form no cycle, so no two areas import each other, directly or through others.
const visiting = new Set();
const acyclic = new Set();
const checkNoCycle = (area, path) => {
  if (acyclic.has(area)) return;
  if (visiting.has(area))
    throw new Error(`.dependency-cruiser.cjs: the domain areas ${[...path, area].join(' → ')} import each other in a cycle`);
  visiting.add(area);
  for (const other of DOMAIN_AREAS[area]) checkNoCycle(other, [...path, area]);
  visiting.delete(area);
  acyclic.add(area);
};
for (const area of Object.keys(DOMAIN_AREAS)) checkNoCycle(area, []);

const escapeRegExp = (name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const domainAreaRules = Object.entries(DOMAIN_AREAS).map(([area, allowed]) => ({
  name: `domain-area-${area}`,
  comment:
    `domain/${area}/ may import only ${allowed.length ? allowed.map((a) => `domain/${a}/`).join(', ') : 'no other area'} ` +
    '(DOMAIN_AREAS at the top of .dependency-cruiser.cjs). Depend on a port the lower area owns instead of importing upward.',
  severity: 'error',
  from: { path: `${SRC}domain/${escapeRegExp(area)}/` },
  to: { path: `${SRC}domain/[^/]+/`, pathNot: `${SRC}domain/(${[area, ...allowed].map(escapeRegExp).join('|')})/` },
}));

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
      name: 'no-circular',
      comment: 'No module of the server depends on itself through others, type-only imports included.',
      severity: 'error',
      from: { path: SRC },
      to: { path: SRC, circular: true },
    },
    {
      name: 'domain-area-known',
      comment: 'Every folder of domain/ is an area listed in DOMAIN_AREAS, with the areas it may import.',
      severity: 'error',
      from: { path: `${SRC}domain/[^/]+/`, pathNot: `${SRC}domain/(${Object.keys(DOMAIN_AREAS).map(escapeRegExp).join('|')})/` },
      to: { path: `${SRC}domain/` },
    },
    ...domainAreaRules,
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
