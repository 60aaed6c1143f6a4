// What the benchmark runs against: a fresh database (on BENCH_DATABASE_URL / DATABASE_URL's
// server, else an embedded cluster under .bench-data/), the built console on a free port, and
// an API key. Everything started here is registered with `cleanup`, which undoes it in reverse.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { ensureDatabaseExists } from '../../scripts/lib/database';
import { freePort, startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres';

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

/** `pid` leads the app's process group (for CPU accounting). */
export type App = { origin: string; pid: number; stop: () => Promise<void> };

/**
 * `next start` on a free port, in its own process group so that stopping it stops all of it.
 * `nodeFlags` (e.g. --cpu-prof, which NODE_OPTIONS refuses) run the same script under `node …`.
 */
export async function startApp(root: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<App> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const next = [path.join(root, 'node_modules/.bin/next'), 'start', '-p', String(port), '-H', '127.0.0.1'];
  const [cmd, ...args] = nodeFlags.length ? [process.execPath, ...nodeFlags, ...next] : next;
  const child: ChildProcess = spawn(cmd, args, {
    cwd: root,
    env: { ...process.env, ...env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let alive = true;
  void exited.then(() => (alive = false));

  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // Already gone.
    }
  };
  const stop = async () => {
    if (!alive) return;
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  steps.push({ name: 'stop next start', undo: stop });
  // Last resort if this process exits without the clean-up (an uncaught throw, process.exit).
  process.once('exit', () => alive && signal('SIGKILL'));

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive) throw new Error(`next start exited before answering:\n${output.trim()}`);
    try {
      const res = await fetch(`${origin}/api/v1/me`);
      await res.arrayBuffer();
      return { origin, pid: child.pid!, stop };
    } catch {
      if (Date.now() > deadline) throw new Error(`next start did not answer within 60 s:\n${output.trim()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Runs the project's own CLI against the bench database; its stdout, or a thrown error naming the command. */
export function runCli(root: string, databaseUrl: string, args: string[]): string {
  const res = spawnSync(
    path.join(root, 'node_modules/.bin/tsx'),
    ['--conditions=react-server', 'scripts/cli.ts', ...args],
    { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  if (res.status !== 0) {
    throw new Error(`${args[0]} failed (exit ${res.status ?? res.signal}): ${(res.stderr || res.stdout || String(res.error)).trim()}`);
  }
  return res.stdout ?? '';
}

/** An API key (by default with scope outcomes:write), made by the project's own CLI. */
export function createApiKey(root: string, databaseUrl: string, scopes: string[] = ['outcomes:write'], name = 'bench'): string {
  const out = runCli(root, databaseUrl, ['apikeys:create', '--name', name, '--scopes', scopes.join(',')]);
  const secret = /\b(cs_live_[\w-]+)/.exec(out)?.[1];
  if (!secret) throw new Error(`apikeys:create printed no key: ${out.trim()}`);
  return secret;
}

/** A console user with a known password, made by the project's own CLI. */
export function createUser(root: string, databaseUrl: string, user: { email: string; role: 'reviewer' | 'support' | 'admin'; password: string; principal?: string }): void {
  runCli(root, databaseUrl, ['users:create', '--email', user.email, '--role', user.role, '--password', user.password,
    ...(user.principal ? ['--principal', user.principal] : [])]);
}

/**
 * Points this process's data layer at the bench database, for timing the same calls without
 * HTTP; Prisma is disconnected at clean-up. Import data-access modules only after this.
 */
export async function pointDataLayerAt(databaseUrl: string, authSecret: string): Promise<void> {
  process.env.DATABASE_URL = databaseUrl;
  process.env.AUTH_SECRET = authSecret;
  const { closeDb } = await import('@/lib/server/db');
  onCleanup('disconnect Prisma', closeDb);
}
