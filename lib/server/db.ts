import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '@/lib/generated/prisma/client';

// One pool and one client per process; dev reloads reuse them through globalThis.
const holder = globalThis as unknown as { countersignDb?: PrismaClient; countersignPool?: pg.Pool };

/**
 * The process's one connection pool. Prisma runs on it; the few hot paths that a benchmark showed
 * Prisma's per-query overhead dominating (outcome ingestion) use it directly, still only here
 * under lib/server/.
 */
export function pool(): pg.Pool {
  if (holder.countersignPool) return holder.countersignPool;
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  const created = new pg.Pool({
    connectionString,
    max: Number(process.env.DATABASE_POOL_SIZE) || 10,
    connectionTimeoutMillis: 5_000,
  });
  // An idle client losing its connection (the database restarting) must not crash the process.
  created.on('error', (err) => console.error('[db] idle connection lost:', err.message));
  holder.countersignPool = created;
  return created;
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

const unavailableCodes = new Set(['P1001', 'P1002', 'P1017', 'P2024', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '53300']);

/** True when an error means the database cannot be reached or is shutting down (answer 503). */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && (unavailableCodes.has(e.code) || e.code.startsWith('08'))) return true;
    if (typeof e.message === 'string' && /ECONNREFUSED|Connection terminated|timeout exceeded when trying to connect|Can't reach database/i.test(e.message)) return true;
  }
  return false;
}

/** Disconnects Prisma and closes the pool (scripts and tests that end or switch databases). */
export async function closeDb(): Promise<void> {
  const { countersignDb: client, countersignPool: open } = holder;
  holder.countersignDb = undefined;
  holder.countersignPool = undefined;
  await client?.$disconnect().catch(() => {});
  await open?.end().catch(() => {});
}
