import { defineConfig, globalIgnores } from 'eslint/config';
import nextVitals from 'eslint-config-next/core-web-vitals';
import nextTs from 'eslint-config-next/typescript';

// Prisma lives only in data access, lib/server/data/ (STYLE.md §2): everything else calls it.
const prismaOutsideServer = {
  patterns: [
    {
      group: ['@prisma/*', '**/generated/prisma/**', '@/lib/generated/*'],
      message: 'Use a data-access function from lib/server/data/ instead of Prisma.',
    },
    {
      group: ['@/lib/server/data/db', '**/lib/server/data/db', './db', '../data/db'],
      message: 'Only lib/server/data/ modules use the database client.',
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
    ignores: ['lib/server/data/**'],
    rules: { 'no-restricted-imports': ['error', prismaOutsideServer] },
  },
  {
    // Production code: no Prisma outside data access, and never test support.
    files: ['app/**', 'components/**', 'lib/**', 'instrumentation.ts', 'proxy.ts'],
    ignores: ['lib/server/data/**', '**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [...prismaOutsideServer.patterns, testSupport] }] },
  },
  {
    // Test support lives in testing/ (STYLE.md §13); data access, scripts and benchmarks never import it.
    files: ['lib/server/data/**', 'scripts/**', 'bench/**'],
    ignores: ['**/*.test.ts', 'scripts/test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [testSupport] }] },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
]);
