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

export default defineConfig([
  ...nextVitals,
  ...nextTs,
  globalIgnores([
    '.next/**',
    'node_modules/**',
    'lib/generated/**',
    '.data/**',
    '.test-data/**',
    'test-results/**',
    'next-env.d.ts',
  ]),
  {
    files: ['app/**', 'components/**', 'e2e/**', 'lib/**'],
    ignores: ['lib/server/data/**'],
    rules: { 'no-restricted-imports': ['error', prismaOutsideServer] },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
]);
