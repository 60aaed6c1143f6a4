import { describe, expect, it } from 'vitest';
import { db } from '@/lib/server/db/db';
import { findUserByEmail, verifyPassword } from '@/lib/server/users/users';
import { countPendingApprovals, getApproval } from '@/lib/server/approvals';
import { DEMO_PASSWORD, demoUsers, seedDemo } from './seed';
import { demoOutcomes } from './demo-outcomes';
import { listTools } from '@/lib/server/catalog/catalog';
import { value } from '@/testing/factories';
import { config } from '@/lib/config';

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
    expect(await db.approvalRequest.count({ where: { status: 'pending' } })).toBe(13);
    expect(await countPendingApprovals(rui!)).toBe(12); // all but the one on his own principal
    expect(await countPendingApprovals(rita!)).toBe(12); // all but the one she half approved
    expect(await countPendingApprovals(admin!)).toBe(13);
    expect(await countPendingApprovals(sam!)).toBe(0);
    const pending = await db.approvalRequest.findMany({
      where: { status: 'pending' },
      select: { principal: true, requiredApprovals: true, expiresAt: true, createdAt: true, decisions: true },
    });
    expect(pending.filter((p) => p.principal === 'user_reviewer')).toHaveLength(1);
    expect(pending.filter((p) => p.expiresAt.getTime() - p.createdAt.getTime() <= 10 * 60_000)).toHaveLength(1);
    expect(pending.filter((p) => p.requiredApprovals === 2).length).toBeGreaterThanOrEqual(2);
    expect(pending.filter((p) => p.decisions.length === 1 && p.requiredApprovals === 2)).toHaveLength(1);

    // Every demo request but one came with its arguments; only the open ones still hold them, sealed.
    const all = await db.approvalRequest.findMany({
      select: { id: true, requestRef: true, status: true, argumentsSent: true, argumentsSealed: true },
    });
    const decided = all.filter((r) => r.status !== 'pending').map((r) => [r.requestRef, r.status]);
    expect(decided.sort()).toEqual([
      ['req_address_4471', 'redeemed'],
      ['req_refund_3990', 'denied'],
    ]);
    expect(all).toHaveLength(15);
    expect(all.filter((r) => !r.argumentsSent).map((r) => r.requestRef)).toEqual(['req_refund_5203']);
    for (const r of all) {
      expect(r.argumentsSealed === null, r.requestRef).toBe(r.status !== 'pending' || !r.argumentsSent);
      expect(r.argumentsSealed ?? '', r.requestRef).not.toMatch(/12500|Kastanienallee|checkout|marta/);
    }
    const id = (ref: string) => all.find((r) => r.requestRef === ref)!.id;

    // What a reviewer reads: the amount as sent, personal data and secret-named values masked.
    const big = value(await getApproval(rui!, id('req_refund_6120')));
    expect(big.arguments).toEqual({
      order_id: '6120',
      amount: '12500.00',
      currency: 'EUR',
      reason: 'parcel lost in transit',
    });
    expect(big.summary).toBe('Refund 125.00 EUR on order 6120: parcel lost in transit');
    expect(big.tool.description).toMatch(/^Refunds part or all of a captured payment/);
    expect(value(await getApproval(rui!, id('req_erasure_9140'))).arguments).toMatchObject({
      email: '[masked:email]',
    });
    const checkout = value(await getApproval(admin!, id('req_config_checkout_77'))).arguments!;
    expect(checkout.api_token).toBe('[masked:secret]');
    expect(checkout.notify).toEqual(['[masked:email]', '#checkout-alerts']);
    expect(checkout.changes).toEqual({
      payment: { retry_limit: 3, timeout_ms: 2500, providers: ['stripe', 'adyen'] },
      feature_flags: { express_checkout: true, gift_cards: false },
      sample_rate: 0.25,
    });
    const supportSees = value(await getApproval(sam!, id('req_refund_6120')));
    expect([supportSees.arguments, supportSees.argumentsNote]).toEqual([null, 'reviewers only']);
    const unsent = value(await getApproval(rui!, id('req_refund_5203')));
    expect([unsent.status, unsent.arguments, unsent.argumentsNote]).toEqual(['pending', null, 'not sent by the agent']);
    // The requirement is back on after the seed.
    expect(config().COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS).toBe(true);
    const refused = value(await getApproval(rui!, id('req_refund_3990')));
    expect(refused.arguments).toBeNull();
    expect(refused.argumentsNote).toMatch(/^erased when denied at /);
    const redeemed = value(await getApproval(rui!, id('req_address_4471')));
    expect(redeemed.arguments).toBeNull();
    expect(redeemed.argumentsNote).toMatch(/^erased when its grant was redeemed at /);

    // The tool catalog: three servers' eight tools accepted, and send_email's changed description held,
    // with the lint naming what it says to the model.
    const catalog = await db.toolDefinition.findMany({ orderBy: [{ server: 'asc' }, { toolName: 'asc' }] });
    expect(catalog.map((d) => `${d.server}/${d.toolName}${d.heldHash ? ' held' : ''}`)).toEqual([
      'config-mcp/update_config',
      'crm-mcp/add_customer_note',
      'crm-mcp/delete_customer',
      'crm-mcp/lookup_customer',
      'crm-mcp/send_email held',
      'orders-mcp/cancel_order',
      'orders-mcp/get_order',
      'orders-mcp/update_shipping_address',
    ]);
    expect(catalog.every((d) => d.acceptedHash !== null)).toBe(true);
    const crm = value(await listTools(admin!, 'crm-mcp'));
    const sendEmail = crm.tools.find((t) => t.name === 'send_email')!;
    expect(sendEmail.held?.differs).toEqual(['description']);
    expect(sendEmail.held?.definition.description).toMatch(/Ignore previous instructions/);
    expect(crm.lint.filter((f) => f.rule === 'instructions_to_model').map((f) => f.tools)).toEqual([['send_email']]);

    // The seed acts as the command line (and its own key), never as the admin user.
    expect(await db.auditEntry.count({ where: { actor: demoUsers[0].email } })).toBe(0);
    expect(await db.auditEntry.count({ where: { action: 'apikey.revoke', actor: 'cli' } })).toBe(1);

    expect(await seedDemo(now)).toBe(false);
    expect(await db.outcomeRecord.count()).toBe(demoOutcomes(now).length);
  });
});
