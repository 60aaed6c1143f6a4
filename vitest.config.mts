import { defineConfig } from 'vitest/config';
import path from 'node:path';

export default defineConfig({
  resolve: {
    tsconfigPaths: true,
    // 'server-only' throws outside React server builds; tests call the data layer directly.
    alias: { 'server-only': path.resolve('scripts/lib/empty-module.ts') },
  },
  test: {
    include: ['lib/**/*.test.ts', 'scripts/**/*.test.ts', 'app/**/*.test.ts', 'components/**/*.test.ts'],
    environment: 'node',
    // Vitest's default is one worker fewer than the CPUs: one on a 2-core machine, where most of a
    // file's time is spent waiting on PostgreSQL, child processes and sockets, not computing.
    // Each file has its own database (testing/vitest-setup.ts), so files may run side by side.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    setupFiles: ['testing/vitest-setup.ts'],
  },
});
