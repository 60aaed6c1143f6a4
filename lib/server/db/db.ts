import 'server-only';
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '@/lib/generated/prisma/client';
import { config } from '@/lib/config';

// One pool and one client per process; dev reloads reuse them through globalThis.
const holder = globalThis as unknown as {
  countersignDb?: PrismaClient;
  countersignPool?: pg.Pool;
  countersignLogPool?: pg.Pool;
  countersignReplicaDb?: PrismaClient;
  countersignReplicaPool?: pg.Pool;
};

/**
 * Where this async context's reads go: set only by replicaSafe() (replica.ts), the one way a data
 * function declares itself a read the replica may serve. Everything else, and every transaction,
 * runs on the primary.
 */
export const readTarget = new AsyncLocalStorage<'replica' | 'primary'>();
const onReplica = () => readTarget.getStore() === 'replica';

/**
 * The process's one connection pool. Prisma runs on it, and so do the statements Prisma cannot
 * say (lib/server/<concept>/sql.ts, through the typed helper db/kysely.ts).
 */
export function pool(): pg.Pool {
  if (holder.countersignPool) return holder.countersignPool;
  const { DATABASE_QUERY_TIMEOUT_MS: queryTimeout, DATABASE_POOL_SIZE } = config();
  holder.countersignPool = createPool({
    max: DATABASE_POOL_SIZE,
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

/**
 * Session settings of every connection the console opens.
 *   - JIT off: the console's statements are short lookups, but over a partitioned table the
 *     planner's cost estimates climb past jit_above_cost, and LLVM then compiles for far longer
 *     than the statement runs (bench:ingest's resolution step shows it).
 *   - Generic plans for named prepared statements (kysely.ts preparedRows, the ingest hot
 *     path; nothing else names its statements, Prisma included): planned once per connection,
 *     pruning partitions at run time, instead of five custom plans first.
 */
const SESSION_OPTIONS = '-c jit=off -c plan_cache_mode=force_generic_plan';

function createPool(options: pg.PoolConfig, connectionString = config().DATABASE_URL): pg.Pool {
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  const created = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: 5_000,
    ...options,
    options: [SESSION_OPTIONS, options.options].filter(Boolean).join(' '),
  });
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
    query_timeout: config().DATABASE_QUERY_TIMEOUT_MS,
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
  const connectionString = config().DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is not set');
  return new pg.Client({ connectionString, connectionTimeoutMillis: 5_000, options: SESSION_OPTIONS });
}

/**
 * The streaming replica's pool (DATABASE_REPLICA_URL), or null when none is configured. Its
 * connections give up sooner than the primary's: a replica that does not answer costs a read a
 * moment before it falls back to the primary (replica.ts).
 */
export function replicaPool(): pg.Pool | null {
  const { DATABASE_REPLICA_URL: url, DATABASE_QUERY_TIMEOUT_MS: queryTimeout, DATABASE_REPLICA_POOL_SIZE } = config();
  if (!url) return null;
  if (holder.countersignReplicaPool) return holder.countersignReplicaPool;
  holder.countersignReplicaPool = createPool(
    {
      max: DATABASE_REPLICA_POOL_SIZE,
      connectionTimeoutMillis: 2_000,
      statement_timeout: Math.max(queryTimeout - 2_000, Math.ceil(queryTimeout / 2)),
      query_timeout: queryTimeout,
      keepAlive: true,
      application_name: 'countersign-replica-reads',
    },
    url,
  );
  return holder.countersignReplicaPool;
}

/** Where a statement without an explicit connection runs (kysely.ts `rows`): the replica inside replicaSafe. */
export function readPool(): pg.Pool {
  return (onReplica() && replicaPool()) || pool();
}

function primaryClient(): PrismaClient {
  holder.countersignDb ??= new PrismaClient({ adapter: new PrismaPg(pool()) });
  return holder.countersignDb;
}

function replicaClient(): PrismaClient | null {
  const replica = replicaPool();
  if (!replica) return null;
  holder.countersignReplicaDb ??= new PrismaClient({ adapter: new PrismaPg(replica) });
  return holder.countersignReplicaDb;
}

// Always the primary, whatever the context: transactions (and every read inside one) and raw writes.
const primaryOnly = new Set<PropertyKey>(['$transaction', '$executeRaw', '$executeRawUnsafe']);

export const db: PrismaClient = new Proxy({} as PrismaClient, {
  // Created on first use, so importing this module (e.g. during `next build`) needs no database.
  get(_target, prop) {
    const client = (onReplica() && !primaryOnly.has(prop) && replicaClient()) || primaryClient();
    const value = Reflect.get(client, prop);
    return typeof value === 'function' ? value.bind(client) : value;
  },
});

export type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** Disconnects Prisma and closes the pools (scripts and tests that end or switch databases). */
export async function closeDb(): Promise<void> {
  const { countersignDb: client, countersignPool: open, countersignLogPool: log } = holder;
  const { countersignReplicaDb: replicaDb, countersignReplicaPool: replica } = holder;
  holder.countersignDb = undefined;
  holder.countersignPool = undefined;
  holder.countersignLogPool = undefined;
  holder.countersignReplicaDb = undefined;
  holder.countersignReplicaPool = undefined;
  await client?.$disconnect().catch(() => {});
  await replicaDb?.$disconnect().catch(() => {});
  await open?.end().catch(() => {});
  await log?.end().catch(() => {});
  await replica?.end().catch(() => {});
}
