import { describe, expect, it } from 'vitest';
import { db, pool } from './db';
import {
  errorCodes,
  isCheckViolation,
  isDeadlock,
  isLockNotAvailable,
  isRecordNotFound,
  isSerializationFailure,
  isUniqueViolation,
} from './errors';
import { isDatabaseUnavailable } from './unavailable';
import { uniq } from '../../../testing/factories';

// The shapes each layer raises, as pg and Prisma 7 with @prisma/adapter-pg raise them: the last
// block provokes the real ones and checks that they carry the same codes in the same places.
const pgError = (code: string) => Object.assign(new Error('from pg'), { name: 'error', severity: 'ERROR', code });
const adapterCause = (originalCode: string, kind: string) => ({ originalCode, originalMessage: 'from pg', kind });
const prismaError = (code: string, cause: object) =>
  Object.assign(new Error('from Prisma'), {
    name: 'PrismaClientKnownRequestError',
    code,
    clientVersion: '7',
    meta: { driverAdapterError: Object.assign(new Error(String(code)), { name: 'DriverAdapterError', cause }) },
  });

type Predicate = (err: unknown) => boolean;
const predicates: [string, Predicate][] = [
  ['unique', isUniqueViolation],
  ['check', isCheckViolation],
  ['serialization', isSerializationFailure],
  ['deadlock', isDeadlock],
  ['lockNotAvailable', isLockNotAvailable],
  ['recordNotFound', isRecordNotFound],
];

// Which predicates each error satisfies (every other one must answer false).
const cases: [string, unknown, string[]][] = [
  ['pg: unique violation', pgError('23505'), ['unique']],
  ['pg: check violation', pgError('23514'), ['check']],
  ['pg: serialization failure', pgError('40001'), ['serialization']],
  ['pg: deadlock', pgError('40P01'), ['deadlock']],
  ['pg: lock not available', pgError('55P03'), ['lockNotAvailable']],
  ['pg: not-null violation', pgError('23502'), []],
  ['Prisma model write: P2002', prismaError('P2002', adapterCause('23505', 'UniqueConstraintViolation')), ['unique']],
  [
    'Prisma raw query: P2010 over 23505',
    prismaError('P2010', adapterCause('23505', 'UniqueConstraintViolation')),
    ['unique'],
  ],
  [
    'Prisma: P2039 over 23514',
    prismaError('P2039', { ...adapterCause('23514', 'postgres'), code: '23514' }),
    ['check'],
  ],
  [
    'Prisma model write: P2034 over 40001',
    prismaError('P2034', adapterCause('40001', 'TransactionWriteConflict')),
    ['serialization'],
  ],
  [
    'Prisma model write: P2034 over 40P01',
    prismaError('P2034', adapterCause('40P01', 'TransactionWriteConflict')),
    ['serialization', 'deadlock'],
  ],
  [
    'Prisma raw query: P2010 over 40P01',
    prismaError('P2010', adapterCause('40P01', 'TransactionWriteConflict')),
    ['deadlock'],
  ],
  [
    'Prisma raw query: P2010 over 55P03',
    prismaError('P2010', { ...adapterCause('55P03', 'postgres'), code: '55P03' }),
    ['lockNotAvailable'],
  ],
  ['Prisma: P2002 without meta', Object.assign(new Error('x'), { code: 'P2002' }), ['unique']],
  [
    'Prisma: P2025',
    Object.assign(new Error('x'), { code: 'P2025', meta: { modelName: 'PolicyRule' } }),
    ['recordNotFound'],
  ],
  ['pg error wrapped in cause', new Error('outer', { cause: pgError('23505') }), ['unique']],
  ['nested causes', new Error('a', { cause: new Error('b', { cause: pgError('40001') }) }), ['serialization']],
  ['a code on a plain string is not read', 'P2002', []],
  ['null', null, []],
  ['undefined', undefined, []],
  ['a number code', { code: 23505 }, []],
  ['an unrelated error', new Error('boom'), []],
  ['a socket error', Object.assign(new Error('x'), { code: 'ECONNRESET' }), []],
];

describe('database error predicates', () => {
  it.each(cases)('%s', (_, err, expected) => {
    const answered = predicates.filter(([, is]) => is(err)).map(([name]) => name);
    expect(answered).toEqual(expected);
  });

  it('stop on a cycle and past five levels', () => {
    const cyclic: { code: string; cause?: unknown } = { code: 'X' };
    cyclic.cause = cyclic;
    expect([...errorCodes(cyclic)]).toEqual(['X']);
    let deep: unknown = pgError('23505');
    for (let i = 0; i < 5; i++) deep = new Error(`level ${i}`, { cause: deep });
    expect(isUniqueViolation(deep)).toBe(true); // the code is at depth 5
    expect(isUniqueViolation(new Error('level 5', { cause: deep }))).toBe(false);
  });

  it('errorCodes lists every code of the chain, outermost first', () => {
    const err = prismaError('P2034', { ...adapterCause('40001', 'TransactionWriteConflict'), code: 'X' });
    expect([...errorCodes(err)]).toEqual(['P2034', 'X', '40001']);
  });
});

/** The error `run` rejects with (it must reject). */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

async function untilWaitingOnALock() {
  for (let i = 0; i < 200; i++) {
    const { rows } = await pool().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0].n > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no session waits on a lock');
}

describe('the errors PostgreSQL raises through each layer (real PostgreSQL)', () => {
  it('a duplicate key, through a Prisma model write, a Prisma raw query and the pool', async () => {
    const email = `${uniq()}@example.test`;
    const data = { email, name: 'n', role: 'reviewer' as const, principalId: email };
    await db.user.create({ data });
    const insert = `INSERT INTO users (id, email, name, role, principal_id, updated_at)
      VALUES (gen_random_uuid(), $1, 'n', 'reviewer', 'p', now())`;
    const errors = [
      await failure(() => db.user.create({ data })),
      await failure(() => db.$executeRawUnsafe(insert, email)),
      await failure(() => pool().query(insert, [email])),
    ];
    expect(errors.map((e) => [...errorCodes(e)])).toEqual([['P2002', '23505'], ['P2010', '23505'], ['23505']]);
    for (const err of errors) {
      expect(isUniqueViolation(err)).toBe(true);
      expect(isCheckViolation(err)).toBe(false);
      expect(isDatabaseUnavailable(err)).toBe(false);
    }
  });

  it('a CHECK violation, through a Prisma model write and the pool', async () => {
    const errors = [
      await failure(() =>
        db.policyRule.create({ data: { server: 's', toolName: '', requiredApprovals: 1, createdBy: 't' } }),
      ),
      await failure(() =>
        pool().query(
          `INSERT INTO policy_rules (server, tool_name, required_approvals, created_by) VALUES ('s', '', 1, 't')`,
        ),
      ),
    ];
    expect(errors.map((e) => [...errorCodes(e)])).toEqual([['P2039', '23514', '23514'], ['23514']]);
    for (const err of errors) {
      expect(isCheckViolation(err)).toBe(true);
      expect(isUniqueViolation(err)).toBe(false);
    }
  });

  it('a row lock not available (NOWAIT), through a Prisma raw query and the pool', async () => {
    const email = `${uniq()}@example.test`;
    await db.user.create({ data: { email, name: 'n', role: 'reviewer', principalId: email } });
    const holder = await pool().connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM users WHERE email = $1 FOR UPDATE', [email]);
      const errors = [
        await failure(() => db.$queryRaw`SELECT 1 FROM users WHERE email = ${email} FOR UPDATE NOWAIT`),
        await failure(() => pool().query('SELECT 1 FROM users WHERE email = $1 FOR UPDATE NOWAIT', [email])),
      ];
      expect(errors.map((e) => [...errorCodes(e)])).toEqual([['P2010', '55P03', '55P03'], ['55P03']]);
      for (const err of errors) {
        expect(isLockNotAvailable(err)).toBe(true);
        expect(isSerializationFailure(err)).toBe(false);
      }
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it('a serialization failure, through a Prisma model write in a transaction and the pool', async () => {
    const email = `${uniq()}@example.test`;
    await db.user.create({ data: { email, name: 'n', role: 'reviewer', principalId: email } });
    // Each loser has taken its snapshot, then updates the row a winner changed and commits.
    const lose = async (update: () => Promise<unknown>) => {
      const winner = await pool().connect();
      try {
        await winner.query('BEGIN');
        await winner.query(`UPDATE users SET name = 'winner' WHERE email = $1`, [email]);
        const lost = failure(update);
        await untilWaitingOnALock();
        await winner.query('COMMIT');
        return await lost;
      } finally {
        winner.release();
      }
    };
    const viaPrisma = await lose(() =>
      db.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT 1`;
          await tx.user.update({ where: { email }, data: { name: 'loser' } });
        },
        { isolationLevel: 'RepeatableRead' },
      ),
    );
    const loser = await pool().connect();
    let viaPool: unknown;
    try {
      await loser.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await loser.query('SELECT 1');
      viaPool = await lose(() => loser.query(`UPDATE users SET name = 'loser' WHERE email = $1`, [email]));
    } finally {
      await loser.query('ROLLBACK');
      loser.release();
    }
    expect([[...errorCodes(viaPrisma)], [...errorCodes(viaPool)]]).toEqual([['P2034', '40001'], ['40001']]);
    for (const err of [viaPrisma, viaPool]) {
      expect(isSerializationFailure(err)).toBe(true);
      expect(isDeadlock(err)).toBe(false);
    }
  });
});
