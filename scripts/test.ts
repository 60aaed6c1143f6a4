// `npm test`: every test — unit and integration (Vitest, real PostgreSQL) and browser (Playwright,
// Debian Chromium) — on a fresh database that is dropped afterwards.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureBuild } from './lib/build';
import { ensureChromium } from './lib/chromium';
import { ensureDatabaseExists } from './lib/database';
import { startEmbeddedPostgres } from './lib/embedded-postgres';
import { applyMigrations } from './lib/migrations';
import { childEnvironment, config, setEnvironment } from '@/lib/config';

type Counts = { passed: number; failed: number; skipped: number };

async function testDatabase(): Promise<{ url: string; admin: string; drop: () => Promise<void> }> {
  const name = `countersign_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const server = config().TEST_DATABASE_URL || config().DATABASE_URL;
  let base: URL;
  let stopEmbedded = () => {};
  if (server) {
    base = new URL(server);
  } else {
    const cluster = await startEmbeddedPostgres(path.resolve('.test-data'));
    base = new URL(cluster.url());
    if (cluster.started) stopEmbedded = cluster.stop;
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  await ensureDatabaseExists(url.toString());
  const admin = new URL(base);
  admin.pathname = '/postgres';
  return {
    url: url.toString(),
    admin: admin.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await client.end();
      stopEmbedded();
    },
  };
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const res = spawnSync(path.resolve('node_modules/.bin', cmd), args, { stdio: 'inherit', env });
  return res.status ?? 1;
}

function vitestCounts(file: string): Counts {
  if (!existsSync(file)) return { passed: 0, failed: 1, skipped: 0 };
  const r = JSON.parse(readFileSync(file, 'utf8'));
  // A suite that fails to load has no failed tests but success=false: count it as one failure.
  const suiteErrors = !r.success && r.numFailedTests === 0 ? 1 : 0;
  return {
    passed: r.numPassedTests,
    failed: r.numFailedTests + suiteErrors,
    skipped: r.numPendingTests + r.numTodoTests,
  };
}

/**
 * A runner that exits non-zero without a failed test in its report (its web server could not
 * start, a set-up threw, it crashed) has still failed: count one failure, and say why.
 */
function atLeastOneFailureIfFailed(counts: Counts, status: number, runner: string): Counts {
  if (status === 0 || counts.failed > 0) return counts;
  console.log(`[test] ✘ ${runner} exited with status ${status} but reported no failed test: counted as one failure`);
  return { ...counts, failed: 1 };
}

function playwrightCounts(file: string): Counts {
  if (!existsSync(file)) return { passed: 0, failed: 1, skipped: 0 };
  const s = JSON.parse(readFileSync(file, 'utf8')).stats;
  return { passed: s.expected + s.flaky, failed: s.unexpected, skipped: s.skipped };
}

async function main() {
  // Optional: "unit" or "e2e", then files or filters for that runner (npm run test:e2e -- e2e/x.spec.ts).
  const [only, ...filters] = process.argv.slice(2);
  const started = Date.now();
  const db = await testDatabase();
  const reports = path.resolve('test-results');
  rmSync(reports, { recursive: true, force: true });
  const totals: Counts = { passed: 0, failed: 0, skipped: 0 };
  const add = (c: Counts) => {
    totals.passed += c.passed;
    totals.failed += c.failed;
    totals.skipped += c.skipped;
  };
  try {
    await applyMigrations(db.url);
    const env = childEnvironment({
      DATABASE_URL: db.url,
      TEST_ADMIN_DATABASE_URL: db.admin,
      AUTH_SECRET: 'test-secret-' + randomBytes(16).toString('hex'),
      NEXT_TELEMETRY_DISABLED: '1',
    });

    if (only !== 'e2e') {
      // prisma/schema/ and prisma/migrations must agree (works in scratch databases on the same server).
      const check = run('tsx', ['scripts/migrate.ts', 'check'], env);
      add(check === 0 ? { passed: 1, failed: 0, skipped: 0 } : { passed: 0, failed: 1, skipped: 0 });
      console.log(check === 0 ? '[test] ✓ schema and migrations agree' : '[test] ✘ schema and migrations disagree');

      const vitest = run(
        'vitest',
        ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${reports}/vitest.json`, ...filters],
        env,
      );
      add(atLeastOneFailureIfFailed(vitestCounts(`${reports}/vitest.json`), vitest, 'vitest'));
    }

    if (only !== 'unit') {
      env.CHROMIUM_PATH = ensureChromium();
      setEnvironment({ DATABASE_URL: db.url, AUTH_SECRET: env.AUTH_SECRET });
      const { seedDemo } = await import('./seed');
      await seedDemo();
      const { closeDb } = await import('@/lib/server/db/db');
      await closeDb();
      ensureBuild();
      // Two runs, one after the other (playwright.config.ts): the specs that must have the console to
      // themselves, one at a time, then the others two at a time. A run a filter leaves empty passes.
      for (const project of ['one-at-a-time', 'side-by-side']) {
        const report = `${reports}/e2e-${project}.json`;
        const playwright = run('playwright', ['test', `--project=${project}`, '--pass-with-no-tests', ...filters], {
          ...env,
          E2E_JSON_REPORT: report,
        });
        add(atLeastOneFailureIfFailed(playwrightCounts(report), playwright, `playwright (${project})`));
      }
    }
  } finally {
    await db.drop().catch((err) => console.error('[test] could not drop the test database:', err));
  }
  console.log(`\n[test] finished in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
  process.exit(totals.failed > 0 || totals.passed === 0 ? 1 : 0);
}

main().catch((err) => {
  console.error('[test]', err instanceof Error ? err.message : err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
