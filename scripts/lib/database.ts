// Which database and secret the console, the CLI and the seed use: DATABASE_URL when set,
// else the embedded cluster in COUNTERSIGN_DATA_DIR (default .data/).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres';
import { config } from '@/lib/config';

/** authSecret is undefined only with DATABASE_URL and no AUTH_SECRET: the console refuses to start then. */
export type ResolvedDatabase = { url: string; embedded: boolean; authSecret: string | undefined; release: () => void };

export const dataDir = () => path.resolve(config().COUNTERSIGN_DATA_DIR);

/** Creates the database named in `url` on its server when it does not exist yet. */
export async function ensureDatabaseExists(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } catch (err) {
    // Two processes may create it at once; the loser sees 42P04 (duplicate_database).
    if ((err as { code?: string }).code !== '42P04') throw err;
  } finally {
    await client.end();
  }
}

export async function resolveDatabase(): Promise<ResolvedDatabase> {
  const { DATABASE_URL, AUTH_SECRET } = config();
  if (DATABASE_URL) return { url: DATABASE_URL, embedded: false, authSecret: AUTH_SECRET, release: () => {} };
  const dir = dataDir();
  const cluster = await startEmbeddedPostgres(dir);
  const url = cluster.url('countersign');
  await ensureDatabaseExists(url);
  const secretFile = path.join(dir, 'auth-secret');
  if (!AUTH_SECRET && !existsSync(secretFile)) {
    writeFileSync(secretFile, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  }
  const authSecret = AUTH_SECRET || readFileSync(secretFile, 'utf8').trim();
  return { url, embedded: true, authSecret, release: () => cluster.started && cluster.stop() };
}
