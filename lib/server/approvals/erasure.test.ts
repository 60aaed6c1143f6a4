import { beforeAll, describe, expect, it } from 'vitest';
import { decideApproval, expireStaleApprovals, getApproval, revokeApproval } from '.';
import { redeemGrant } from './grants';
import { db } from '../db/db';
import type { ApprovalView } from '@/lib/approvals/view';
import { ARGUMENTS, ARGUMENTS_DIGEST } from '@/testing/approvals-arguments';
import {
  NONE,
  ONE,
  TRUSTED,
  admin,
  approve,
  makeApproval,
  redeemer,
  reviewer,
  setUpApprovalActors,
  sleep,
  sql,
  value,
} from '@/testing/approvals-fixtures';

// Arguments are kept only while someone may decide (docs/design.md "What a reviewer sees: what
// will run"): every path to a terminal state erases them in the statement that makes it terminal,
// and a read treats a request past its time as erased whatever the sweep has done.
beforeAll(setUpApprovalActors);

const sealedOf = async (id: string) =>
  (await db.approvalRequest.findUniqueOrThrow({ where: { id }, select: { argumentsSealed: true } })).argumentsSealed;
const read = async (id: string) => value(await getApproval(reviewer, id));
const shown = (v: ApprovalView) => ({ arguments: v.arguments, note: v.argumentsNote });

describe('erased as the request ends', () => {
  it('by a denial', async () => {
    const { id } = await makeApproval(ONE);
    expect(shown(await read(id))).toEqual({ arguments: ARGUMENTS, note: null });
    value(await decideApproval(reviewer, { id, decision: 'deny', reason: 'wrong order', version: 1 }));
    expect(await sealedOf(id)).toBeNull();
    const v = await read(id);
    expect(shown(v)).toEqual({ arguments: null, note: `erased when denied at ${v.decidedAt!.toISOString()}` });
  });

  it('by the redemption of its grant, not by its approval', async () => {
    const { id } = await makeApproval(ONE);
    const approved = value(await approve(reviewer, id, 1));
    expect(approved.status).toBe('approved');
    // Approved with a live grant: still open, still shown.
    expect(await sealedOf(id)).not.toBeNull();
    expect(shown(await read(id))).toEqual({ arguments: ARGUMENTS, note: null });
    const redeemed = value(
      await redeemGrant(redeemer, approved.grant!.id, {
        server: TRUSTED,
        tool: 'update_note',
        argsDigest: ARGUMENTS_DIGEST,
      }),
    );
    expect(await sealedOf(id)).toBeNull();
    expect(shown(await read(id))).toEqual({
      arguments: null,
      note: `erased when its grant was redeemed at ${redeemed.redeemedAt.toISOString()}`,
    });
  });

  it('by revoking a pending request, and an approved one', async () => {
    const pending = await makeApproval(ONE);
    const approved = await makeApproval(ONE);
    value(await approve(reviewer, approved.id, 1));
    for (const { id } of [pending, approved]) {
      const v = value(await revokeApproval(admin, { id, reason: 'handled by phone' }));
      expect(await sealedOf(id)).toBeNull();
      expect(shown(v)).toEqual({ arguments: null, note: `erased when revoked at ${v.revoked!.at.toISOString()}` });
    }
  });

  it('by expiry: read as erased once the clock passes, erased in the row by the sweep', async () => {
    const { id, expiresAt } = await makeApproval({ ...ONE, pendingTtlSeconds: 1 });
    await sleep(1_100);
    // Not swept yet: the box is still in the row, but nobody is shown it.
    expect(await sealedOf(id)).not.toBeNull();
    const erased = { arguments: null, note: `erased when it expired at ${expiresAt.toISOString()}` };
    expect(shown(await read(id))).toEqual(erased);
    expect(shown(value(await getApproval(admin, id)))).toEqual(erased);
    await expireStaleApprovals();
    expect(await sealedOf(id)).toBeNull();
    expect((await read(id)).status).toBe('expired');
    expect(shown(await read(id))).toEqual(erased);
  });

  it('when an approved request’s grant lapses unused: read as erased at once, erased in the row by the sweep', async () => {
    const created = await makeApproval({ ...NONE, grantTtlSeconds: 1 });
    expect(created.status).toBe('approved');
    await sleep(1_100);
    expect(await sealedOf(created.id)).not.toBeNull();
    const erased = {
      arguments: null,
      note: `erased when its grant expired at ${created.grant!.expiresAt.toISOString()}`,
    };
    expect(shown(await read(created.id))).toEqual(erased);
    await expireStaleApprovals();
    expect(await sealedOf(created.id)).toBeNull();
    // Still approved: that is what the reviewers decided.
    expect(await read(created.id)).toMatchObject({ status: 'approved', grant: { state: 'expired' } });
    expect(shown(await read(created.id))).toEqual(erased);
  });
});

describe('the database itself', () => {
  it('erases in the statement that makes a request terminal, whoever writes it', async () => {
    const { id } = await makeApproval(ONE);
    const { rows } = await sql(
      `UPDATE approval_requests SET status = 'denied', decided_at = now(), version = version + 1
       WHERE id = $1 RETURNING arguments_sealed`,
      [id],
    );
    expect(rows).toEqual([{ arguments_sealed: null }]);
  });

  it('keeps no arguments on a terminal row (a CHECK, even with the triggers off)', async () => {
    const { id } = await makeApproval(ONE);
    await expect(
      sql(
        `SET session_replication_role = replica;
         UPDATE approval_requests SET status = 'expired' WHERE id = '${id}'`,
      ),
    ).rejects.toThrow(/approval_requests_arguments_erased_check/);
    expect(await sealedOf(id)).not.toBeNull();
  });

  it('lets arguments only be erased, never replaced or added', async () => {
    const a = await makeApproval(ONE);
    const b = await makeApproval(ONE);
    await expect(
      sql(
        `UPDATE approval_requests SET arguments_sealed = (SELECT arguments_sealed FROM approval_requests WHERE id = $2)
         WHERE id = $1`,
        [a.id, b.id],
      ),
    ).rejects.toThrow(/only ever erased/);
    await sql(`UPDATE approval_requests SET arguments_sealed = NULL WHERE id = $1`, [a.id]);
    await expect(
      sql(`UPDATE approval_requests SET arguments_sealed = 'v2.x.y.z.w' WHERE id = $1`, [a.id]),
    ).rejects.toThrow(/only ever erased/);
  });
});
