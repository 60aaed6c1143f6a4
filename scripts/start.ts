// `npm start`: database (embedded unless DATABASE_URL), migrations, demo data once, build if needed
// (at the same time, quietly), serve; the address and the demo sign-in are the last lines printed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { resolveDatabase } from './lib/database';
import { applyMigrations } from './lib/migrations';
import { buildInBackground, buildIsCurrent } from './lib/build';
import { childEnvironment, config, configFailure, setEnvironment } from '@/lib/config';
import { sharedLimitsWarning } from '@/lib/config/processes.mjs';

async function main() {
  const started = Date.now();
  // Before anything starts: the whole configuration (lib/config); a bad value stops here, named
  // (the server would refuse it too).
  const settings = config();
  const processes = settings.COUNTERSIGN_PROCESSES;
  const warning = sharedLimitsWarning(processes, settings.REDIS_URL);
  if (warning) console.warn(warning);
  // The build does not need the database: it runs while the database starts, migrates and seeds.
  const logFile = path.resolve(settings.COUNTERSIGN_DATA_DIR, 'build.log');
  const buildStarted = Date.now();
  if (!buildIsCurrent())
    console.log('[build] building the console in the background (about a minute on 2 cores; quiet unless it fails)…');
  const build = buildInBackground(process.cwd(), logFile);
  build.catch(() => {}); // awaited below; a failure must not surface as an unhandled rejection first
  void build.then((built) => {
    if (built)
      console.log(`[build] console built in ${((Date.now() - buildStarted) / 1000).toFixed(1)} s (log: ${logFile})`);
  });
  const database = await resolveDatabase();
  if (!database.authSecret)
    throw new Error('AUTH_SECRET is required when DATABASE_URL is set (generate one with: openssl rand -base64 32)');
  setEnvironment({ DATABASE_URL: database.url, AUTH_SECRET: database.authSecret });
  const applied = await applyMigrations(database.url);
  if (applied.length) console.log(`[db] applied migrations: ${applied.join(', ')}`);

  const { seedDemo, printDemoSignIn } = await import('./seed');
  const demo = database.embedded || settings.COUNTERSIGN_SEED_DEMO;
  if (demo) {
    if (await seedDemo()) console.log('[seed] demo users, outcome records and approval requests created');
  } else {
    const { db } = await import('@/lib/server/db/db');
    if ((await db.user.count()) === 0)
      console.log(
        '[seed] no users yet: create an admin with `npm run cli -- users:create --email you@example.com --role admin`',
      );
  }
  // The first start after an upgrade of the classifier re-derives stored classifications, once,
  // in the background (resumable: a run stopped with the server continues on the next start).
  const { needsReclassify } = await import('@/lib/server/outcomes/reclassify');
  const reclassify = await needsReclassify();
  const { closeDb } = await import('@/lib/server/db/db');
  await closeDb();

  await build;
  if (reclassify) {
    console.log('[reclassify] stored classifications are older than the classifier: re-deriving in the background');
    const child = spawn(
      path.resolve('node_modules/.bin/tsx'),
      ['--conditions=react-server', 'scripts/cli.ts', 'outcomes:reclassify'],
      { stdio: 'inherit', env: childEnvironment({ DATABASE_URL: database.url, AUTH_SECRET: database.authSecret }) },
    );
    child.on('exit', (code) => code && console.error(`[reclassify] stopped (exit ${code}); the next start resumes it`));
  }
  const port = settings.PORT ?? '3000';
  // scripts/lib/serve.mjs: `next start`, in COUNTERSIGN_PROCESSES processes sharing the port.
  const server = spawn(process.execPath, [path.resolve('scripts/lib/serve.mjs'), '-p', port], {
    stdio: 'inherit',
    env: childEnvironment({
      DATABASE_URL: database.url,
      AUTH_SECRET: database.authSecret,
      NEXT_TELEMETRY_DISABLED: '1',
    }),
  });
  // Last, once the server answers, so it stays on screen: where to go and how to sign in.
  void waitUntilServing(port).then((up) => {
    console.log(
      `\n[start] Countersign ${up ? 'is ready' : 'is starting'} on http://localhost:${port} (set-up took ${((Date.now() - started) / 1000).toFixed(1)} s${database.embedded ? ', embedded PostgreSQL' : ''}${processes > 1 ? `, ${processes} processes` : ''})`,
    );
    if (demo) printDemoSignIn();
  });

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

async function waitUntilServing(port: string, timeoutMs = 30_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/sign-in`, { redirect: 'manual' });
      if (res.status < 500) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

main().catch((err) => {
  const failure = configFailure(err);
  console.error(`[start] ${failure ? `configuration error: ${failure}` : err instanceof Error ? err.message : err}`);
  process.exit(1);
});
