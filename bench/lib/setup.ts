// What the benchmark runs against: a fresh database (on BENCH_DATABASE_URL / DATABASE_URL's
// server, else an embedded cluster under .bench-data/), the built console on a free port, and
// an API key. Everything started here is registered with `cleanup`, which undoes it in reverse.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { DEMO_TRUSTED_SERVERS } from '../../scripts/demo-outcomes';
import { ensureBuild } from '../../scripts/lib/build';
import { ensureDatabaseExists } from '../../scripts/lib/database';
import { startConsole, type ConsoleProcess } from '../../scripts/lib/console-process';
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres';
import { applyMigrations } from '../../scripts/lib/migrations';
import { parseProcesses, PROCESSES_ENV } from '../../scripts/lib/serve.mjs';
import { load1, log } from './report';

export { createApiKey, createUser, runCli } from '../../scripts/lib/console-process';

const steps: { name: string; undo: () => Promise<void> | void }[] = [];

/** Registers one more undo step for `cleanup` (run before everything registered earlier). */
export function onCleanup(name: string, undo: () => Promise<void> | void): void {
  steps.push({ name, undo });
}

/** A pg client on the bench database, closed by `cleanup` (before the database is dropped). */
export async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // Dropping the database WITH (FORCE) ends the connection: never an unhandled 'error' event.
  client.on('error', () => {});
  await client.connect();
  steps.push({ name: 'close a pg client', undo: () => client.end() }); // a no-op once ended
  return client;
}

/** Runs every registered undo step, newest first; safe to call more than once. */
export async function cleanup(): Promise<void> {
  while (steps.length) {
    const step = steps.pop()!;
    try {
      await step.undo();
    } catch (err) {
      console.error(`[bench] clean-up "${step.name}" failed:`, err instanceof Error ? err.message : err);
    }
  }
}

export type BenchDatabase = { url: string; where: string };

export async function benchDatabase(root: string): Promise<BenchDatabase> {
  const server = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL;
  let base: URL;
  let where: string;
  if (server) {
    base = new URL(server);
    where = `server ${base.host}`;
  } else {
    const cluster = await startEmbeddedPostgres(path.join(root, '.bench-data'));
    if (cluster.started) steps.push({ name: 'stop embedded PostgreSQL', undo: cluster.stop });
    base = new URL(cluster.url());
    where = `embedded (.bench-data, port ${cluster.port})`;
  }
  const name = `countersign_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(base);
  url.pathname = `/${name}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  // Registered first, so a failure half-way through creating it still drops it.
  steps.push({
    name: `drop ${name}`,
    undo: async () => {
      const client = new pg.Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  });
  await ensureDatabaseExists(url.toString());
  return { url: url.toString(), where: `${where}, database ${name}` };
}

export type App = ConsoleProcess;

/** The built console on a free port (scripts/lib/console-process.ts), stopped by `cleanup`. */
export async function startApp(root: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<App> {
  const app = await startConsole(root, env, nodeFlags);
  steps.push({ name: 'stop next start', undo: app.stop });
  return app;
}

export type Bench = {
  /** The 1-minute load average before anything started. */
  startLoad: string;
  db: BenchDatabase;
  /** A pg client on the bench database (closed by `cleanup`). */
  sql: pg.Client;
  pgVersion: string;
};

/**
 * The set-up the console benchmarks share, in this order: a fresh bench database (its place
 * logged) with the migrations applied, a pg client on it, the server's version, the demo's MCP
 * servers trusted; then `prepare`, the benchmark's own data and credentials (CLI calls: made
 * before the console starts, since a keep-alive connection left idle past the server's timeout
 * meanwhile fails the next request); then the build if needed and the console on its own
 * AUTH_SECRET (under --cpu-prof when BENCH_CPU_PROFILE names a folder), its origin logged.
 */
export async function setUpBench<T>(
  root: string,
  prepare: (bench: Bench) => Promise<T> | T,
): Promise<Bench & { prepared: T; app: App; authSecret: string }> {
  const startLoad = load1();
  const db = await benchDatabase(root);
  log(`database: ${db.where}`);
  await applyMigrations(db.url, { warn: () => {} });
  const sql = await connect(db.url);
  const pgVersion = (await sql.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
  await sql.query(`INSERT INTO trusted_servers (name, trusted_by) SELECT unnest($1::text[]), 'bench'`, [
    DEMO_TRUSTED_SERVERS,
  ]);
  const bench = { startLoad, db, sql, pgVersion };
  const prepared = await prepare(bench);

  const authSecret = randomBytes(32).toString('base64url');
  ensureBuild(root);
  const profile = process.env.BENCH_CPU_PROFILE;
  const app = await startApp(
    root,
    { DATABASE_URL: db.url, AUTH_SECRET: authSecret },
    profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profile)}`] : [],
  );
  // COUNTERSIGN_PROCESSES and REDIS_URL in this environment reach the console (scripts/lib/serve.mjs).
  const processes = parseProcesses(process.env[PROCESSES_ENV]);
  const limits = process.env.REDIS_URL?.trim() ? 'rate limits in Redis' : 'rate limits per process';
  log(`console: ${app.origin} (${processes} process${processes > 1 ? 'es' : ''}, ${limits})`);
  return { ...bench, prepared, app, authSecret };
}

/**
 * Points this process's data layer at the bench database, for timing the same calls without
 * HTTP; Prisma is disconnected at clean-up. Import data-access modules only after this.
 */
export async function pointDataLayerAt(databaseUrl: string, authSecret: string): Promise<void> {
  process.env.DATABASE_URL = databaseUrl;
  process.env.AUTH_SECRET = authSecret;
  const { closeDb } = await import('@/lib/server/db/db');
  onCleanup('disconnect Prisma', closeDb);
}
