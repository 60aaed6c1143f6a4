import { describe, expect, it } from 'vitest';
import { db } from '@/lib/server/data/db';
import { verifyPassword } from '@/lib/server/data/users';
import { DEMO_PASSWORD, demoUsers, seedDemo } from './seed';
import { demoOutcomes } from './demo-outcomes';

describe('demo seed (real PostgreSQL)', () => {
  it('seeds users, trusted servers and every demo record once, and leaves no usable key', async () => {
    const now = Date.UTC(2026, 10, 30, 12);
    expect(await seedDemo(now)).toBe(true);
    for (const u of demoUsers) expect((await verifyPassword(u.email, DEMO_PASSWORD))?.role).toBe(u.role);
    expect(await db.outcomeRecord.count()).toBe(demoOutcomes(now).length);
    expect((await db.trustedServer.findMany()).map((s) => s.name).sort()).toEqual(['billing-mcp', 'orders-mcp']);
    expect(await db.apiKey.count({ where: { revokedAt: null } })).toBe(0);

    expect(await seedDemo(now)).toBe(false);
    expect(await db.outcomeRecord.count()).toBe(demoOutcomes(now).length);
  });
});
