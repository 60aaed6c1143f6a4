import 'server-only';
import { db } from '../db';
import { appendAudit } from '../audit';
import { notifyDecision } from '../../jobs/notify';
import { authorize, type Viewer } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { isUuid, type DecisionBody, type RevokeBody } from '@/lib/approvals/schemas';
import { describeDecisions, describeSettled, type ApprovalView } from '@/lib/approvals/view';
import { fail, ok, type Result } from '@/lib/result';
import { dbNow, findView, mask, refusedByDatabase, toView, TX_OPTIONS, viewSelect } from './shared';
import { issueGrant } from './request';

export type DecisionInput = DecisionBody & { id: string };

/**
 * One reviewer's decision (API.md, `POST /api/v1/approvals/{id}/decisions`): a conditional update
 * on pending, unexpired, the version the reviewer saw, not the reviewer's own request and not
 * decided by them before. The loser of a race gets a conflict naming who decided what and when.
 */
export async function decideApproval(viewer: Actor, input: DecisionInput): Promise<Result<ApprovalView>> {
  if (!authorize(viewer, 'approval.decide')) return fail('forbidden');
  if (!isUuid(input.id)) return fail('not_found');
  const reason = mask(input.reason);
  const decided = await db
    .$transaction(async (tx) => {
      const [request] = await tx.$queryRaw<{ required_approvals: number }[]>`
      UPDATE approval_requests r SET version = r.version + 1
      WHERE r.id = ${input.id}::uuid AND r.status = 'pending' AND r.version = ${input.version}::int
        AND r.expires_at > clock_timestamp() AND r.principal <> ${viewer.principalId}
        AND NOT EXISTS (SELECT 1 FROM approval_decisions d WHERE d.approval_id = r.id AND d.reviewer_id = ${viewer.userId}::uuid)
      RETURNING r.required_approvals`;
      if (!request) return false;
      await tx.approvalDecision.create({
        data: {
          approvalId: input.id,
          reviewerId: viewer.userId,
          reviewerEmail: viewer.email,
          reviewerPrincipal: viewer.principalId,
          decision: input.decision,
          reason,
        },
      });
      await appendAudit(tx, {
        actor: viewer.email,
        action: `approval.${input.decision}`,
        targetType: 'approval',
        targetId: input.id,
        data: { reason, version: input.version, reviewerPrincipal: viewer.principalId },
      });
      if (input.decision === 'deny') {
        await tx.$executeRaw`UPDATE approval_requests SET status = 'denied', decided_at = now() WHERE id = ${input.id}::uuid`;
        await appendAudit(tx, {
          actor: viewer.email,
          action: 'approval.denied',
          targetType: 'approval',
          targetId: input.id,
        });
        return true;
      }
      const approvals = await tx.approvalDecision.count({ where: { approvalId: input.id, decision: 'approve' } });
      if (approvals >= request.required_approvals) {
        await tx.$executeRaw`UPDATE approval_requests SET status = 'approved', decided_at = now() WHERE id = ${input.id}::uuid`;
        await appendAudit(tx, {
          actor: viewer.email,
          action: 'approval.approved',
          targetType: 'approval',
          targetId: input.id,
          data: { approvals },
        });
        await issueGrant(tx, input.id, viewer.email, `${approvals} of ${request.required_approvals} approvals`);
      }
      return true;
    }, TX_OPTIONS)
    .catch((err: unknown) => {
      if (refusedByDatabase(err)) return false;
      throw err;
    });
  if (decided) {
    const view = (await findView(input.id))!;
    notifyDecision(view, { reviewer: viewer.email, decision: input.decision, reason });
    return ok(view);
  }
  return explainRefusedDecision(viewer, input);
}

async function explainRefusedDecision(viewer: Viewer, input: DecisionInput): Promise<Result<never>> {
  const row = await db.approvalRequest.findUnique({
    where: { id: input.id },
    select: {
      ...viewSelect,
      decisions: {
        select: { ...viewSelect.decisions.select, reviewerId: true },
        orderBy: viewSelect.decisions.orderBy,
      },
    },
  });
  if (!row) return fail('not_found');
  if (row.principal === viewer.principalId) {
    return fail(
      'forbidden',
      `You cannot decide on this request: it was made on your own behalf (principal "${row.principal}"). Another reviewer must decide.`,
    );
  }
  const view = toView(row, await dbNow());
  const mine = row.decisions.find((d) => d.reviewerId === viewer.userId);
  if (mine)
    return fail(
      'conflict',
      `You already decided on this request: ${describeDecisions([{ reviewer: mine.reviewerEmail, decision: mine.decision, reason: mine.reason, at: mine.at }])}. Each reviewer decides once.`,
    );
  if (view.status !== 'pending') return fail('conflict', describeSettled(view));
  if (view.version !== input.version) {
    return fail(
      'conflict',
      `This request changed since you loaded it (now version ${view.version}, you sent ${input.version}): ${describeSettled(view)} Reload and decide again.`,
    );
  }
  return fail('conflict', 'This request changed while you were deciding; reload and decide again.');
}

export type RevokeInput = RevokeBody & { id: string };

/**
 * An admin withdraws a pending request or an approved, unredeemed grant, at once (API.md,
 * `POST /api/v1/approvals/{id}/revoke`). Locks the grant before the request, as redemption does,
 * so the two never deadlock and never both succeed.
 */
export async function revokeApproval(viewer: Actor, input: RevokeInput): Promise<Result<ApprovalView>> {
  if (!authorize(viewer, 'approval.revoke')) return fail('forbidden');
  if (!isUuid(input.id)) return fail('not_found');
  const reason = mask(input.reason);
  const revoked = await db.$transaction(async (tx) => {
    // Twice: a request approved between the two statements has a grant by the second round.
    for (let round = 0; round < 2; round++) {
      const [grant] = await tx.$queryRaw<{ id: string; revoked_at: Date }[]>`
        UPDATE grants SET revoked_at = clock_timestamp()
        WHERE approval_id = ${input.id}::uuid AND redeemed_at IS NULL AND revoked_at IS NULL AND expires_at > clock_timestamp()
        RETURNING id, revoked_at`;
      const from = grant ? 'approved' : 'pending';
      const count = grant
        ? await tx.$executeRaw`
            UPDATE approval_requests SET status = 'revoked', version = version + 1, revoked_at = ${grant.revoked_at}, revoked_by = ${viewer.email}, revoke_reason = ${reason}
            WHERE id = ${input.id}::uuid AND status = 'approved'`
        : await tx.$executeRaw`
            UPDATE approval_requests SET status = 'revoked', version = version + 1, revoked_at = clock_timestamp(), revoked_by = ${viewer.email}, revoke_reason = ${reason}
            WHERE id = ${input.id}::uuid AND status = 'pending' AND expires_at > clock_timestamp()`;
      if (grant && count !== 1)
        throw new Error(`invariant: the live grant ${grant.id} belongs to a request that is not approved`);
      if (count === 1) {
        await appendAudit(tx, {
          actor: viewer.email,
          action: 'approval.revoke',
          targetType: 'approval',
          targetId: input.id,
          data: { from, reason, grantId: grant?.id ?? null },
        });
        return true;
      }
    }
    return false;
  }, TX_OPTIONS);
  const view = await findView(input.id);
  if (!view) return fail('not_found');
  if (revoked) return ok(view);
  if (view.status === 'approved' && view.grant?.state === 'expired') {
    return fail(
      'conflict',
      `Its grant expired unused at ${view.grant.expiresAt.toISOString()}: there is nothing left to revoke.`,
    );
  }
  return fail('conflict', `${describeSettled(view)} There is nothing left to revoke.`);
}
