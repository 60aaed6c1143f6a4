import { describe, expect, it } from 'vitest';
import { db } from '@/lib/server/db/db';
import { findUserByEmail, verifyPassword } from '@/lib/server/users/users';
import { countPendingApprovals } from '@/lib/server/approvals';
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

    // Pending requests for the demo reviewers (scripts/demo-approvals.ts), counted by hand.
    const [admin, rui, rita, sam] = await Promise.all(demoUsers.map((u) => findUserByEmail(u.email)));
    expect(await db.approvalRequest.count({ where: { status: 'pending' } })).toBe(7);
    expect(await countPendingApprovals(rui!)).toBe(6); // all but the one on his own principal
    expect(await countPendingApprovals(rita!)).toBe(6); // all but the one she half approved
    expect(await countPendingApprovals(admin!)).toBe(7);
    expect(await countPendingApprovals(sam!)).toBe(0);
    const pending = await db.approvalRequest.findMany({
      where: { status: 'pending' },
      select: { principal: true, requiredApprovals: true, expiresAt: true, createdAt: true, decisions: true },
    });
    expect(pending.filter((p) => p.principal === 'user_reviewer')).toHaveLength(1);
    expect(pending.filter((p) => p.expiresAt.getTime() - p.createdAt.getTime() <= 10 * 60_000)).toHaveLength(1);
    expect(pending.filter((p) => p.requiredApprovals === 2).length).toBeGreaterThanOrEqual(2);
    expect(pending.filter((p) => p.decisions.length === 1 && p.requiredApprovals === 2)).toHaveLength(1);
    // The seed acts as the command line (and its own key), never as the admin user.
    expect(await db.auditEntry.count({ where: { actor: demoUsers[0].email } })).toBe(0);
    expect(await db.auditEntry.count({ where: { action: 'apikey.revoke', actor: 'cli' } })).toBe(1);

    expect(await seedDemo(now)).toBe(false);
    expect(await db.outcomeRecord.count()).toBe(demoOutcomes(now).length);
  });
});
