// What the benchmarks run against: a fresh database (on the server of --database-url, else an
// embedded cluster under .bench-data/) with the migrations applied, the built console on a free
// port, and credentials made by the project's own CLI. Everything started here is undone by
// `cleanup`, newest first, also on Ctrl-C.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { DEMO_TRUSTED_SERVERS } from '../../scripts/demo-outcomes';
import { ensureBuild } from '../../scripts/lib/build';
import * as cli from '../../scripts/lib/console-process';
import { ensureDatabaseExists } from '../../scripts/lib/database';
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres';
import { applyMigrations } from '../../scripts/lib/migrations';
import { log, root } from './report';

const steps: { name: string; undo: () => Promise<void> | void }[] = [];

export function onCleanup(name: string, undo: () => Promise<void> | void): void {
  steps.push({ name, undo });
}

export async function cleanup(): Promise<void> {
  for (let step = steps.pop(); step; step = steps.pop()) {
    try {
      await step.undo();
    } catch (err) {
      console.error(`[bench] clean-up "${step.name}" failed:`, err instanceof Error ? err.message : err);
    }
  }
}

/** Runs `main` and exits with its code, cleaning up first (also on SIGINT and SIGTERM). */
export function runMain(main: () => Promise<number | void>): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void cleanup().finally(() => process.exit(130)));
  main().then(
    async (code) => {
      await cleanup();
      process.exit(code ?? 0);
    },
    async (err: unknown) => {
      console.error('[bench]', err instanceof Error ? (err.stack ?? err.message) : err);
      await cleanup();
      process.exit(1);
    },
  );
}

let server: Promise<URL> | undefined;

/** The PostgreSQL server the databases are made on: the given one, or the embedded cluster. */
function databaseServer(databaseUrl?: string): Promise<URL> {
  server ??= (async () => {
    if (databaseUrl) return new URL(databaseUrl);
    const cluster = await startEmbeddedPostgres(path.join(root, '.bench-data'));
    if (cluster.started) onCleanup('stop embedded PostgreSQL', () => cluster.stop());
    return new URL(cluster.url());
  })();
  return server;
}

export type Db = { url: string; sql: pg.Client; pgVersion: string };

/**
 * A fresh database with the migrations applied and the demo's MCP servers trusted (as the seed
 * does), a pg client on it; dropped by `cleanup`.
 */
export async function freshDatabase(databaseUrl?: string): Promise<Db> {
  const base = await databaseServer(databaseUrl);
  const name = `countersign_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(base);
  url.pathname = `/${name}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  onCleanup(`drop ${name}`, async () => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => c.end());
  });
  await ensureDatabaseExists(url.toString());
  await applyMigrations(url.toString(), { warn: () => {} });
  const sql = new pg.Client({ connectionString: url.toString() });
  sql.on('error', () => {}); // the drop at the end ends the connection
  await sql.connect();
  onCleanup('close a pg client', () => sql.end());
  await sql.query(`INSERT INTO trusted_servers (name, trusted_by) SELECT unnest($1::text[]), 'bench'`, [
    [...DEMO_TRUSTED_SERVERS, 'bench-mcp'],
  ]);
  const pgVersion = (await sql.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v.split(
    ' ',
  )[0];
  log(`database ${name} on ${base.host}`);
  return { url: url.toString(), sql, pgVersion };
}

export const newSecret = () => randomBytes(32).toString('base64url');

/**
 * The built console (built first when its sources changed) on the database, with any other
 * settings in `env`; stopped by `cleanup`.
 */
export async function startConsole(
  env: { DATABASE_URL: string; AUTH_SECRET: string } & Record<string, string>,
): Promise<cli.ConsoleProcess> {
  ensureBuild(root);
  const app = await cli.startConsole(root, env);
  onCleanup('stop the console', app.stop);
  log(`console on ${app.origin}`);
  return app;
}

export const createApiKey = (db: Db, scopes: string[], name: string) => cli.createApiKey(root, db.url, scopes, name);
export const createUser = (db: Db, user: Parameters<typeof cli.createUser>[2]) => cli.createUser(root, db.url, user);
