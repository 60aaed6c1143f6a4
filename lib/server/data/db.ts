import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '@/lib/generated/prisma/client';

// One pool and one client per process; dev reloads reuse them through globalThis.
const holder = globalThis as unknown as {
  countersignDb?: PrismaClient;
  countersignPool?: pg.Pool;
  countersignLogPool?: pg.Pool;
};

/**
 * The process's one connection pool. Prisma runs on it, and so do the statements Prisma cannot
 * say (lib/server/data/sql/, through its typed helper sql/kysely.ts).
 */
export function pool(): pg.Pool {
  if (holder.countersignPool) return holder.countersignPool;
  const queryTimeout = Number(process.env.DATABASE_QUERY_TIMEOUT_MS) || 15_000;
  holder.countersignPool = createPool({
    max: Number(process.env.DATABASE_POOL_SIZE) || 10,
    // A database that does not answer (stopped: refused at once; frozen, or a network dropping
    // packets: silence) must cost a request seconds, then a 503, never a hang. New connections
    // give up after 5 s. A slow statement is cancelled by the server itself (statement_timeout),
    // which rolls it back: giving up only on this side would leave it running, free to commit
    // after its caller was told 503. The client-side limit, a little later, is for a server
    // that cannot even do that (frozen): without it such a query waits forever.
    statement_timeout: Math.max(queryTimeout - 2_000, Math.ceil(queryTimeout / 2)),
    query_timeout: queryTimeout,
    keepAlive: true,
  });
  return holder.countersignPool;
}

function createPool(config: pg.PoolConfig): pg.Pool {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  const created = new pg.Pool({ connectionString, connectionTimeoutMillis: 5_000, ...config });
  // An idle client losing its connection (the database restarting) must not crash the process.
  created.on('error', (err) => console.error('[db] idle connection lost:', err.message));
  return created;
}

/**
 * Two connections whose commits do not wait for the disk (synchronous_commit off), for records
 * of reads only, where a database crash may lose the last fraction of a second but nothing can
 * be left inconsistent: the incident access log. Its insert was the slowest step of an incident
 * read (an fsync per view); now it costs what the reads beside it cost.
 */
export function logPool(): pg.Pool {
  holder.countersignLogPool ??= createPool({
    max: 2,
    query_timeout: Number(process.env.DATABASE_QUERY_TIMEOUT_MS) || 15_000,
    options: '-c synchronous_commit=off',
  });
  return holder.countersignLogPool;
}

/**
 * A connection of its own, outside the pools (not yet connected), for a session that must outlive
 * any one transaction: the retention purge's advisory lock, released by closing it. Reads
 * DATABASE_URL when called.
 */
export function sessionClient(): pg.Client {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  return new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
}

function createClient(): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool()) });
}

export const db: PrismaClient = new Proxy({} as PrismaClient, {
  // Created on first use, so importing this module (e.g. during `next build`) needs no database.
  get(_target, prop) {
    holder.countersignDb ??= createClient();
    const value = Reflect.get(holder.countersignDb, prop);
    return typeof value === 'function' ? value.bind(holder.countersignDb) : value;
  },
});

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** Disconnects Prisma and closes the pools (scripts and tests that end or switch databases). */
export async function closeDb(): Promise<void> {
  const { countersignDb: client, countersignPool: open, countersignLogPool: log } = holder;
  holder.countersignDb = undefined;
  holder.countersignPool = undefined;
  holder.countersignLogPool = undefined;
  await client?.$disconnect().catch(() => {});
  await open?.end().catch(() => {});
  await log?.end().catch(() => {});
}
