import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../scripts/lib/embedded-postgres';
import { closeDb, db, pool } from './db';
import { isDatabaseUnavailable } from './unavailable';
import { restoreEnv, setEnv } from '@/testing/env';

// isDatabaseUnavailable decides between 503 and 500, so it is tested on the errors real outages
// produce, through Prisma (which wraps the driver's) and through the pool directly. The shared
// test server must not be stopped: this file runs its own cluster (.faults-data/unit).

let cluster: Awaited<ReturnType<typeof startEmbeddedPostgres>>;

beforeAll(async () => {
  cluster = await startEmbeddedPostgres(path.resolve('.faults-data', 'unit'), { port: 'free' }); // not the main cluster's COUNTERSIGN_PG_PORT
  await closeDb();
  setEnv({ DATABASE_URL: cluster.url(), DATABASE_POOL_SIZE: '4', DATABASE_QUERY_TIMEOUT_MS: '2000' });
});

afterAll(async () => {
  await closeDb();
  restoreEnv();
  cluster?.stop();
});

/** Waits until `n` sessions are inside pg_sleep, so that a stop interrupts running queries. */
async function untilSleeping(n: number) {
  const admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'",
      );
      if (rows[0].n >= n) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`fewer than ${n} queries started`);
  } finally {
    await admin.end();
  }
}

/** The error `run` rejects with (it must reject). */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

const sleepQuery = (seconds: number) =>
  [
    () => db.$queryRaw`SELECT pg_sleep(${seconds})`,
    () => db.$transaction((tx) => tx.$queryRaw`SELECT pg_sleep(${seconds})`),
    () => pool().query('SELECT pg_sleep($1)', [seconds]),
  ] as const;

describe('isDatabaseUnavailable on real failures', () => {
  it('a query interrupted by a fast shutdown (57P01), through Prisma, a Prisma transaction and the pool', async () => {
    const errors = sleepQuery(5).map((run) => failure(run));
    await untilSleeping(3);
    try {
      cluster.stop('fast');
      const [prisma, transaction, raw] = await Promise.all(errors);
      // Prisma keeps the SQLSTATE only inside meta.driverAdapterError.
      expect(prisma).toMatchObject({
        code: 'P2010',
        meta: { driverAdapterError: { cause: { originalCode: '57P01' } } },
      });
      expect(raw).toMatchObject({ code: '57P01' });
      for (const err of [prisma, transaction, raw]) expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    } finally {
      cluster.start();
    }
  });

  it('a query cut off by a crash (immediate shutdown)', async () => {
    const errors = sleepQuery(5).map((run) => failure(run));
    await untilSleeping(3);
    try {
      cluster.stop('immediate');
      for (const err of await Promise.all(errors)) expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    } finally {
      cluster.start();
    }
  });

  it('the server down: connection refused, for a query, a model read and a transaction', async () => {
    cluster.stop('fast');
    try {
      const errors = await Promise.all([
        failure(() => db.$queryRaw`SELECT 1`),
        failure(() => db.user.count()),
        failure(() => db.$transaction((tx) => tx.user.count())),
        failure(() => pool().query('SELECT 1')),
      ]);
      for (const err of errors) expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    } finally {
      cluster.start();
    }
    await expect(db.$queryRaw`SELECT 1 AS one`).resolves.toEqual([{ one: 1 }]);
  });

  it('no server answer within the query timeout (a frozen database looks the same)', async () => {
    for (const err of await Promise.all(sleepQuery(3).map((run) => failure(run)))) {
      expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    }
  });

  it('a statement past the timeout is cancelled by the server and commits nothing (not only abandoned here)', async () => {
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    try {
      await admin.query('DROP TABLE IF EXISTS faults_probe; CREATE TABLE faults_probe (id int)');
      const err = await failure(() =>
        pool().query('WITH i AS (INSERT INTO faults_probe VALUES (1) RETURNING id) SELECT pg_sleep(3) FROM i'),
      );
      expect(err).toMatchObject({ code: '57014' });
      expect(isDatabaseUnavailable(err)).toBe(true);
      // Had only the client given up, the statement would still be sleeping, then commit.
      await new Promise((r) => setTimeout(r, 3_500));
      expect((await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM faults_probe')).rows[0].n).toBe(0);
    } finally {
      await admin.query('DROP TABLE IF EXISTS faults_probe');
      await admin.end();
    }
  });

  it('too many connections (53300)', async () => {
    const admin = new pg.Client({ connectionString: cluster.url() });
    await admin.connect();
    try {
      await admin.query('DROP ROLE IF EXISTS faults_limited');
      await admin.query("CREATE ROLE faults_limited LOGIN PASSWORD 'limited' CONNECTION LIMIT 0");
      await closeDb();
      const limited = new URL(cluster.url());
      limited.username = 'faults_limited';
      limited.password = 'limited';
      setEnv({ DATABASE_URL: limited.toString() });
      for (const err of [await failure(() => db.$queryRaw`SELECT 1`), await failure(() => pool().query('SELECT 1'))]) {
        expect(isDatabaseUnavailable(err), String(err)).toBe(true);
      }
    } finally {
      await closeDb();
      setEnv({ DATABASE_URL: cluster.url() });
      await admin.query('DROP ROLE IF EXISTS faults_limited');
      await admin.end();
    }
  });

  it('is false for the errors of a working database: bad SQL, a constraint, a missing row', async () => {
    const errors = await Promise.all([
      failure(() => db.$queryRaw`SELECT * FROM no_such_table`),
      failure(() => pool().query('SELECT 1/0')),
      failure(() =>
        db.$transaction(async (tx) => {
          await tx.$executeRaw`CREATE TEMP TABLE t (id int PRIMARY KEY)`;
          await tx.$executeRaw`INSERT INTO t VALUES (1), (1)`;
        }),
      ),
      failure(async () => {
        throw new Error('some bug');
      }),
    ]);
    for (const err of errors) expect(isDatabaseUnavailable(err), String(err)).toBe(false);
  });
});
