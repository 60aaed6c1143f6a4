import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

// Prisma lives only in data access, lib/server/<concept>/: everything else calls data-access functions.
const prismaOutsideServer = {
  patterns: [
    {
      group: ['@prisma/*', '**/generated/prisma/**', '@/lib/generated/*'],
      message: 'Use a data-access function from lib/server/<concept>/ instead of Prisma.',
    },
    {
      group: ['@/lib/server/db/db', '**/lib/server/db/db', './db', '../data/db'],
      message: 'Only lib/server/ modules use the database client.',
    },
  ],
};

const testSupport = { group: ['@/testing/*', '**/testing/*'], message: 'Test support (testing/) is for tests only.' };

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([
    '.next/**',
    'node_modules/**',
    'lib/generated/**',
    '.data/**',
    '.test-data/**',
    '.bench-data/**',
    'test-results/**',
    'next-env.d.ts',
  ]),
  {
    // Tests and browser specs: no Prisma outside data access.
    files: ['app/**', 'components/**', 'e2e/**', 'lib/**'],
    ignores: ['lib/server/**'],
    rules: { 'no-restricted-imports': ['error', prismaOutsideServer] },
  },
  {
    // Production code: no Prisma outside data access, and never test support.
    files: ['app/**', 'components/**', 'lib/**', 'instrumentation.ts', 'proxy.ts'],
    ignores: ['lib/server/**', '**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...prismaOutsideServer.patterns, testSupport] }] },
  },
  {
    // Test support lives in testing/; data access, scripts and benchmarks never import it.
    files: ['lib/server/**', 'scripts/**', 'bench/**'],
    ignores: ['**/*.test.ts', 'scripts/test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [testSupport] }] },
  },
  {
    // The environment is read in one place, lib/config (docs/configuration.md): one schema, parsed
    // once, a bad value named. Everything else asks config(); a child process gets childEnvironment().
    // Not here: testing/ (the harness that prepares environments) and the tools' own configuration
    // files at the root (playwright.config.ts, prisma.config.ts, vitest.config.mts, next.config.js).
    files: ['app/**', 'lib/**', 'components/**', 'scripts/**', 'bench/**', 'e2e/**', 'instrumentation.ts', 'proxy.ts'],
    ignores: ['lib/config/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration with config() from lib/config; pass the environment on with childEnvironment().',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[source.value=/^(node:)?process$/] > ImportSpecifier[imported.name='env']",
          message: 'Read configuration with config() from lib/config; pass the environment on with childEnvironment().',
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
]);
