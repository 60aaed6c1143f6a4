import 'server-only';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@/lib/generated/prisma/client';

// One client per process; dev reloads reuse it through globalThis.
const holder = globalThis as unknown as { countersignDb?: PrismaClient };

function createClient(): PrismaClient {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  const adapter = new PrismaPg({
    connectionString,
    max: Number(process.env.DATABASE_POOL_SIZE) || 10,
    connectionTimeoutMillis: 5_000,
  });
  return new PrismaClient({ adapter });
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
