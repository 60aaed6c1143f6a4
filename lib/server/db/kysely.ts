import 'server-only';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type Compilable,
  type CompiledQuery,
  type RawBuilder,
} from 'kysely';
import type pg from 'pg';
import type { DB } from '@/lib/generated/kysely/database';
import type { PrismaClient } from '@/lib/generated/prisma/client';
import { pool, readPool, type Tx } from './db';

/**
 * The one typed helper for the statements Prisma cannot say. Every such statement
 * lives in lib/server/<concept>/sql.ts, written with Kysely's builder where it can say it and
 * with its `sql` template where it cannot; table and column types come from DB, which prisma-kysely
 * generates from prisma/schema/. Built here, run with `rows`/`affected` on:
 *   - nothing: the process's pool (lib/server/db/db.ts, its timeouts included); for `rows`
 *     inside a replicaSafe() read (replica.ts), the replica's pool;
 *   - a pg.Pool, PoolClient or Client: another pool (logPool), one held connection (a BEGIN…COMMIT
 *     on it) or a session of its own (db.ts sessionClient);
 *   - Prisma (`db` or a transaction `Tx`), so a statement joins the transaction it belongs to, or
 *     fails with Prisma's errors where the caller reads those (refusedByDatabase).
 * On Prisma the driver's values come back through Prisma's raw-query decoding: int8 as bigint
 * rather than pg's string; every statement run there casts its counts to int.
 */
export const kysely: Kysely<DB> = new Kysely<DB>({
  // Kysely only builds and compiles; `rows`/`affected` run the statement where it belongs. So it
  // holds no connection of its own (none to close, none left on a pool closeDb ended).
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export { sql };
export type { DB };

/** Where a statement runs (see above); the default pool when absent. */
export type On = Tx | PrismaClient | pg.Pool | pg.PoolClient | pg.Client;

type Statement<R> = Compilable<R> | RawBuilder<R>;

const compile = <R>(q: Statement<R>): CompiledQuery<R> => ('isRawBuilder' in q ? q.compile(kysely) : q.compile());

// By property, not `in`: Prisma's clients are proxies.
const isTx = (on: On): on is Tx | PrismaClient => typeof (on as Partial<Tx>).$queryRawUnsafe === 'function';

/** Runs a statement and answers its rows. */
export async function rows<R>(q: Statement<R>, on: On = readPool()): Promise<R[]> {
  const c = compile(q);
  if (isTx(on)) return on.$queryRawUnsafe<R[]>(c.sql, ...c.parameters);
  return (await on.query(c.sql, c.parameters as unknown[])).rows as R[];
}

/**
 * Runs a statement as a named prepared statement on a held connection: parsed and planned once per
 * connection, its generic plan kept (plan_cache_mode, db.ts). For hot-path statements over every
 * partition of outcome_records, whose planning costs more than running them (the resolution
 * statement at ingest, bench:ingest). Every call with one name must
 * compile to the same text (node-pg refuses another under a name it has prepared).
 */
export async function preparedRows<R>(name: string, q: Statement<R>, on: pg.PoolClient | pg.Client): Promise<R[]> {
  const c = compile(q);
  return (await on.query({ name, text: c.sql, values: c.parameters as unknown[] })).rows as R[];
}

/** Runs a statement and answers its first row, if any. */
export async function first<R>(q: Statement<R>, on?: On): Promise<R | undefined> {
  return (await rows(q, on))[0];
}

/** Runs a statement and answers how many rows it changed. */
export async function affected(q: Statement<unknown>, on: On = pool()): Promise<number> {
  const c = compile(q);
  if (isTx(on)) return on.$executeRawUnsafe(c.sql, ...c.parameters);
  return (await on.query(c.sql, c.parameters as unknown[])).rowCount ?? 0;
}

/** Transaction control on one held connection (a PoolClient), for a hot path that runs its own. */
export const BEGIN = sql`BEGIN`;
export const COMMIT = sql`COMMIT`;
export const ROLLBACK = sql`ROLLBACK`;
