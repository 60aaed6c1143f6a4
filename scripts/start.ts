// `npm start`: database (embedded unless DATABASE_URL), migrations, demo data once, build if needed, serve.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { resolveDatabase } from './lib/database';
import { applyMigrations } from './lib/migrations';
import { ensureBuild } from './lib/build';
import { parseRetentionSetting, RETENTION_ENV } from '@/lib/outcomes/retention';
import { rateLimitConfig } from '@/lib/ratelimit/config';
import { identityConfig } from '@/lib/identity/config';

async function main() {
  const started = Date.now();
  // Before anything starts: a bad value names the variable (the server would refuse it too).
  parseRetentionSetting(process.env[RETENTION_ENV]);
  rateLimitConfig();
  identityConfig();
  const database = await resolveDatabase();
  if (!database.authSecret)
    throw new Error('AUTH_SECRET is required when DATABASE_URL is set (generate one with: openssl rand -base64 32)');
  process.env.DATABASE_URL = database.url;
  process.env.AUTH_SECRET = database.authSecret;
  const applied = await applyMigrations(database.url);
  if (applied.length) console.log(`[db] applied migrations: ${applied.join(', ')}`);

  const { seedDemo, printDemoSignIn } = await import('./seed');
  if (database.embedded || process.env.COUNTERSIGN_SEED_DEMO === '1') {
    if (await seedDemo()) console.log('[seed] demo users created');
    printDemoSignIn();
  } else {
    const { db } = await import('@/lib/server/data/db');
    if ((await db.user.count()) === 0)
      console.log(
        '[seed] no users yet: create an admin with `npm run cli -- users:create --email you@example.com --role admin`',
      );
  }
  // The first start after an upgrade of the classifier re-derives stored classifications, once,
  // in the background (resumable: a run stopped with the server continues on the next start).
  const { needsReclassify } = await import('@/lib/server/data/reclassify');
  const reclassify = await needsReclassify();
  const { closeDb } = await import('@/lib/server/data/db');
  await closeDb();

  ensureBuild();
  if (reclassify) {
    console.log('[reclassify] stored classifications are older than the classifier: re-deriving in the background');
    const child = spawn(
      path.resolve('node_modules/.bin/tsx'),
      ['--conditions=react-server', 'scripts/cli.ts', 'outcomes:reclassify'],
      { stdio: 'inherit', env: { ...process.env, DATABASE_URL: database.url, AUTH_SECRET: database.authSecret } },
    );
    child.on('exit', (code) => code && console.error(`[reclassify] stopped (exit ${code}); the next start resumes it`));
  }
  const port = process.env.PORT || '3000';
  const server = spawn(path.resolve('node_modules/.bin/next'), ['start', '-p', port], {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: database.url, AUTH_SECRET: database.authSecret, NEXT_TELEMETRY_DISABLED: '1' },
  });
  console.log(
    `[start] Countersign on http://localhost:${port} (set-up took ${((Date.now() - started) / 1000).toFixed(1)} s${database.embedded ? ', embedded PostgreSQL' : ''})`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    server.kill(signal);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  server.on('exit', (code) => {
    database.release();
    process.exit(code ?? 0);
  });
}

main().catch((err) => {
  console.error(`[start] ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
