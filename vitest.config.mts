import { defineConfig } from 'vitest/config';
import path from 'node:path';

export default defineConfig({
  resolve: {
    tsconfigPaths: true,
    // 'server-only' throws outside React server builds; tests call the data layer directly.
    alias: { 'server-only': path.resolve('scripts/lib/empty-module.ts') },
  },
  test: {
    include: [
      'lib/**/*.test.ts',
      'scripts/**/*.test.ts',
      'bench/**/*.test.ts',
      'app/**/*.test.ts',
      'components/**/*.test.ts',
    ],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['testing/vitest-setup.ts'],
  },
});
