import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

const port = Number(process.env.E2E_PORT || 3100);
// Where the server's stdout and stderr are copied (testing/server-log.mjs), so specs can check
// what it logged. Set once in the runner; its workers inherit it.
process.env.E2E_SERVER_LOG ||= path.join(os.tmpdir(), `countersign-e2e-${port}-${Date.now().toString(36)}.log`);

// Specs that must have the console and the machine to themselves. scripts/test.ts runs these first,
// one file at a time, then the others two files at a time (each file's tests in order, in one
// worker). Any other spec may run beside any other: it makes its own keys, requests and records and
// looks only at those, or at demo data nobody changes.
const oneAtATime = [
  // Their own console, cluster or several processes, with timeouts and refill rates measured in
  // seconds: a second worker's load would make them depend on the machine's speed.
  'faults-database',
  'faults-clients',
  'processes',
  'rate-limits',
  'replica',
  // Changes what the demo servers' tools require (get_order, every billing-mcp tool) while other
  // specs stage requests for them.
  'tools',
  // Reads the newest rows of a log that other specs' page views write to.
  'access-log',
  // Counts the pending requests (the badge, pending-count) that other specs add to.
  'approvals-queue',
];
const alone = new RegExp(`/(${oneAtATime.join('|')})\\.spec\\.ts$`);

export default defineConfig({
  testDir: 'e2e',
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 30_000,
  reporter: [['list'], ['json', { outputFile: process.env.E2E_JSON_REPORT || 'test-results/e2e.json' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: 'off',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  projects: [
    { name: 'side-by-side', testIgnore: alone, outputDir: 'test-results/side-by-side' },
    { name: 'one-at-a-time', testMatch: alone, workers: 1, outputDir: 'test-results/one-at-a-time' },
  ],
  webServer: {
    // node directly, not npx: npx leaves the server running when its parent is killed. serve.mjs is
    // `next start` as every launcher runs it (one process unless COUNTERSIGN_PROCESSES says more).
    command: `node scripts/lib/serve.mjs -p ${port} -H 127.0.0.1`,
    url: `http://127.0.0.1:${port}/sign-in`,
    reuseExistingServer: false,
    timeout: 60_000,
    env: {
      NEXT_TELEMETRY_DISABLED: '1',
      // Specs act as the same few people many times over; the per-person limit (20/s, burst 100)
      // would make them depend on their speed. Real limits are met in e2e/rate-limits.spec.ts,
      // on a second server of its own with low ones.
      RATE_LIMIT_USER_PER_SECOND: '10000',
      RATE_LIMIT_USER_BURST: '100000',
      COUNTERSIGN_SERVER_LOG: process.env.E2E_SERVER_LOG,
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${path.resolve('testing/server-log.mjs')}`]
        .filter(Boolean)
        .join(' '),
    },
  },
});
