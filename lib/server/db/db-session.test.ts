import { describe, expect, it } from 'vitest';
import { db, logPool, pool, sessionClient } from './db';

// The session settings every connection of the console starts with (db.ts SESSION_OPTIONS), read
// back from the real server: JIT off and generic plans for named statements everywhere, the
// access log's pool also without waiting for the disk at commit.
const show = async (q: { query: (s: string) => Promise<{ rows: Record<string, string>[] }> }, name: string) =>
  (await q.query(`SHOW ${name}`)).rows[0][name];

describe('database sessions (real PostgreSQL)', () => {
  it('run without JIT and with generic plans on the pool, through Prisma, on the log pool and on a session of its own', async () => {
    expect(await show(pool(), 'jit')).toBe('off');
    expect(await show(pool(), 'plan_cache_mode')).toBe('force_generic_plan');
    expect(await db.$queryRawUnsafe<{ jit: string }[]>('SHOW jit')).toEqual([{ jit: 'off' }]);
    expect(await show(logPool(), 'jit')).toBe('off');
    expect(await show(logPool(), 'synchronous_commit')).toBe('off');
    expect(await show(pool(), 'synchronous_commit')).toBe('on');
    const session = sessionClient();
    await session.connect();
    try {
      expect(await show(session, 'jit')).toBe('off');
      expect(await show(session, 'plan_cache_mode')).toBe('force_generic_plan');
    } finally {
      await session.end();
    }
  });
});
