import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Nothing that runs after start-up may block the event loop (the block that uses it says why). */
const blockingCalls = [
  {
    selector: 'MemberExpression[property.name=/Sync$/]',
    message: 'Synchronous I/O blocks the event loop after start-up: use the promise API (fs.promises, execFile with promisify).',
  },
  {
    selector: 'ImportSpecifier[imported.name=/Sync$/]',
    message: 'Synchronous I/O blocks the event loop after start-up: use the promise API (fs.promises, execFile with promisify).',
  },
  {
    selector: "MemberExpression[object.name='Atomics'][property.name='wait']",
    message: 'Atomics.wait blocks the event loop: await a timer (node:timers/promises) instead.',
  },
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'test-output/**',
      'data/**',
      'packages/server/catalog/templates/**',
      'test/fixtures/**',
      'openapi.json',
      '.cache/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // The post-receive hook is a CommonJS Node script run by git.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Nothing that runs after start-up may block the event loop: while one call waits on a
    // synchronous file or process operation, every other call waits too. Start-up code is
    // exempt: the files below run before the server listens; elsewhere a start-up-only line
    // carries an eslint-disable comment saying why.
    files: ['packages/server/src/**/*.ts'],
    ignores: [
      'packages/server/src/main/start.ts', // the entry point
      'packages/server/src/main/services.ts', // the composition root
      'packages/server/src/main/wiring/**', // the composition root, by area
      'packages/server/src/main/bootstrap.ts', // the first start's admin key file
      'packages/server/src/main/server.ts', // reads its version and makes the API socket before listening
      'packages/server/src/config/config.ts', // settings are read once, before anything starts
      'packages/server/src/storage/database.ts', // the database file is opened once
      'packages/server/src/storage/catalog-files.ts', // the catalog is loaded once
    ],
    rules: { 'no-restricted-syntax': ['error', ...blockingCalls] },
  },
  {
    // docs/performance.md, rule 13: the Kafka client compiles its protocol schemas when imported
    // (about 0.4 s of CPU), so a node loads it on first use (events/kafka/library.ts), not at start.
    files: ['packages/server/src/**/*.ts'],
    ignores: ['packages/server/src/events/kafka/library.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@platformatic/kafka',
              allowTypeImports: true,
              message:
                'Loaded on first use (docs/performance.md, rule 13): import its types only, and take its classes from kafkaLibrary().',
            },
          ],
        },
      ],
    },
  },
  {
    // docs/performance.md, rule 2: an object rest or spread makes V8 build a hidden class and copy
    // property by property on every call. The files a warm sync call runs through; a file moved
    // or split must be named here again (scripts/check-docs.ts fails on a name that matches
    // nothing). The block repeats blockingCalls because a later block's rule replaces an earlier's.
    name: 'warm-call-path',
    files: [
      'packages/server/src/api/call-lane.ts',
      'packages/server/src/api/call-answer.ts',
      'packages/server/src/api/rate-limits.ts',
      'packages/server/src/api/input-budget.ts',
      'packages/server/src/domain/calls/call-service.ts',
      'packages/server/src/runtime/runner/pipe-request.ts',
      'packages/server/src/runtime/runner/runner-pool.ts',
      'packages/server/src/runtime/runner/output-marks.ts',
      // The API node's half of a sync call in a cluster (NatsRuntime.execute).
      'packages/server/src/cluster/dispatch.ts',
      'packages/server/src/lib/*.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...blockingCalls,
        {
          selector: 'ObjectPattern > RestElement',
          message: 'No object rest on the warm-call path (docs/performance.md, rule 2): name the fields in one literal.',
        },
        {
          selector: 'ObjectExpression > SpreadElement',
          message: 'No object spread on the warm-call path (docs/performance.md, rule 2): name the fields in one literal.',
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
