import { beforeAll, describe, expect, it } from 'vitest';
import {
  countPendingApprovals,
  expireStaleApprovals,
  getApproval,
  listApprovals,
  revokeApproval,
  type ApprovalView,
} from '.';
import { redeemGrant } from './grants';
import { verifyAuditChain } from '../audit/audit';
import { uniq } from '@/testing/factories';
import { db } from '../db/db';
import { approvalListQuerySchema } from '@/lib/approvals/schemas';
import {
  sleep,
  makeKey,
  requester,
  redeemer,
  admin,
  reviewer,
  reviewer2,
  setUpApprovalActors,
  TWO,
  NONE,
  value,
  makeApproval,
  approve,
  approvedGrant,
  redeemBody,
  sql,
} from '@/testing/approvals-fixtures';

beforeAll(setUpApprovalActors);

describe('expiry by the database clock', () => {
  it('a pending request reads expired after its TTL, before any sweep; a decision then conflicts', async () => {
    const created = await makeApproval({ pendingTtlSeconds: 1 });
    await sleep(1200);
    expect(value(await getApproval(admin, created.id)).status).toBe('expired');
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: created.id } })).status).toBe('pending');
    const late = await approve(reviewer, created.id, 1);
    expect(late).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!late.ok && late.detail).toMatch(/^Expired at/);
    expect(await revokeApproval(admin, { id: created.id, reason: 'late' })).toMatchObject({
      ok: false,
      failure: 'conflict',
    });

    // The sweep stores what reads already said, once, with an audit entry.
    expect(await expireStaleApprovals()).toBeGreaterThanOrEqual(1);
    expect((await db.approvalRequest.findUniqueOrThrow({ where: { id: created.id } })).status).toBe('expired');
    await expireStaleApprovals();
    expect(await db.auditEntry.count({ where: { targetId: created.id, action: 'approval.expire' } })).toBe(1);
  });

  it('a grant cannot be redeemed after it expires (gone), and its request stays approved', async () => {
    const { approvalId, grantId } = await approvedGrant({ grantTtlSeconds: 1 });
    await sleep(1200);
    const r = await redeemGrant(redeemer, grantId, redeemBody());
    expect(r).toMatchObject({ ok: false, failure: 'gone' });
    expect(!r.ok && r.detail).toMatch(/expired at/);
    expect(value(await getApproval(admin, approvalId))).toMatchObject({
      status: 'approved',
      grant: { state: 'expired' },
    });
    // Nor directly in SQL.
    await expect(sql('UPDATE grants SET redeemed_at = now() WHERE id = $1', [grantId])).rejects.toThrow(/has expired/);
  });
});

describe('listApprovals', () => {
  it('pending: unexpired only, soonest to expire first, a page at a time; live adds usable grants', async () => {
    const principal = uniq('user');
    const late = await makeApproval({ principal, pendingTtlSeconds: 600 });
    const soon = await makeApproval({ principal, pendingTtlSeconds: 60 });
    const middle = await makeApproval({ principal, pendingTtlSeconds: 300 });
    const lapsing = await makeApproval({ principal, pendingTtlSeconds: 1 });
    const granted = await makeApproval({ ...NONE, principal });
    const used = await makeApproval({ ...NONE, principal });
    value(await redeemGrant(redeemer, used.grant!.id, redeemBody()));
    await sleep(1100);

    const q = (status: string, extra: Record<string, string> = {}) =>
      approvalListQuerySchema.parse({ status, principal, ...extra });
    const first = value(await listApprovals(reviewer, { ...q('pending'), limit: 2 }));
    expect(first.items.map((i) => i.id)).toEqual([soon.id, middle.id]);
    const second = value(await listApprovals(reviewer, q('pending', { cursor: first.nextCursor!, limit: '2' })));
    expect(second).toMatchObject({ items: [{ id: late.id }], nextCursor: null });

    const ids = async (status: string) => value(await listApprovals(reviewer, q(status))).items.map((i) => i.id);
    expect(await ids('expired')).toEqual([lapsing.id]);
    expect(new Set(await ids('live'))).toEqual(new Set([late.id, soon.id, middle.id, granted.id]));
    expect(await ids('redeemed')).toEqual([used.id]);
    // Newest first without a status.
    expect(await ids('')).toEqual([used.id, granted.id, lapsing.id, middle.id, soon.id, late.id]);
    // A cursor from another listing is refused, not misread.
    expect(
      await listApprovals(reviewer, {
        ...q('expired'),
        cursor: first.nextCursor ? approvalListQuerySchema.parse({ cursor: first.nextCursor }).cursor : undefined,
      }),
    ).toMatchObject({ ok: false, failure: 'invalid_input' });
  });

  it('counts the pending queue for people who may read it', async () => {
    const before = await countPendingApprovals(reviewer);
    await makeApproval();
    await makeApproval({ pendingTtlSeconds: 1 });
    expect(await countPendingApprovals(reviewer)).toBe(before + 2);
    await sleep(1100);
    expect(await countPendingApprovals(reviewer)).toBe(before + 1);
  });

  it('lets a key read only with an approvals scope', async () => {
    const outcomesKey = await makeKey(['outcomes:read']);
    expect(await listApprovals(outcomesKey)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect((await listApprovals(redeemer)).ok).toBe(true);
  });
});

describe('the audit trail', () => {
  it('records every state change and every decision, and the chain verifies', async () => {
    const created = await makeApproval(TWO);
    value(await approve(reviewer, created.id, 1));
    const approved = value(await approve(reviewer2, created.id, 2));
    value(await redeemGrant(redeemer, approved.grant!.id, redeemBody({ tool: 'refund_payment' })));
    const entries = await db.auditEntry.findMany({ where: { targetId: created.id }, orderBy: { seq: 'asc' } });
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['approval.request', `api_key:${(requester as { keyId: string }).keyId}`],
      ['approval.approve', reviewer.email],
      ['approval.approve', reviewer2.email],
      ['approval.approved', reviewer2.email],
      ['grant.issue', reviewer2.email],
      ['grant.redeem', `api_key:${(redeemer as { keyId: string }).keyId}`],
    ]);
    expect(entries[1].data).toMatchObject({ reason: 'checked the order', version: 1 });
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });
});

// Keeps the view's type honest for the pages that render it.
export type _ViewCheck = ApprovalView['grant'];
