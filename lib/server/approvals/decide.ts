import 'server-only';
import { db } from '../db/db';
import { affected, first, rows } from '../db/kysely';
import {
  revokeApprovedRequest,
  revokeLiveGrant,
  revokePendingRequest,
  settleDecision,
  takeDecisionTurn,
  withdrawPendingRequest,
} from './sql';
import { appendAudit } from '../audit/audit';
import { enqueueWebhookEvents } from '../webhooks/sql';
import { authorize, type Viewer } from '@/lib/auth/permissions';
import { auditName, type Actor } from '@/lib/auth/actor';
import { isUuid, type DecisionBody, type RevokeBody } from '@/lib/approvals/schemas';
import { describeDecisions, describeSettled, type ApprovalView } from '@/lib/approvals/view';
import { fail, ok, type Result } from '@/lib/result';
import { mask } from '@/lib/redaction/mask';
import { dbNow, findView, refusedByDatabase, toView, TX_OPTIONS, viewSelect } from './shared';
import { issueGrant } from './request';

export type DecisionInput = DecisionBody & { id: string };

/**
 * One reviewer's decision (docs/api.md, `POST /api/v1/approvals/{id}/decisions`): a conditional update
 * on pending, unexpired, the version the reviewer saw, not the reviewer's own request and not
 * decided by them before. The loser of a race gets a conflict naming who decided what and when.
 */
export async function decideApproval(viewer: Actor, input: DecisionInput): Promise<Result<ApprovalView>> {
  if (!authorize(viewer, 'approval.decide')) return fail('forbidden');
  if (!isUuid(input.id)) return fail('not_found');
  const reason = mask(input.reason);
  const decided = await db
    .$transaction(async (tx) => {
      const request = await first(takeDecisionTurn(input.id, input.version, viewer.principalId, viewer.userId), tx);
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
      // Settles it when it should, and writes the outbox's events, in one statement.
      const [{ approvals, status }] = await rows(settleDecision(input.id, input.decision, viewer.email), tx);
      if (status === 'denied') {
        await appendAudit(tx, {
          actor: viewer.email,
          action: 'approval.denied',
          targetType: 'approval',
          targetId: input.id,
        });
      } else if (status === 'approved') {
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
    return ok((await findView(input.id, viewer))!);
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
 * An admin withdraws a pending request or an approved, unredeemed grant, at once (docs/api.md,
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
      const grant = await first(revokeLiveGrant(input.id), tx);
      const from = grant ? 'approved' : 'pending';
      const count = grant
        ? await affected(revokeApprovedRequest(input.id, grant.revoked_at, viewer.email, reason), tx)
        : await affected(revokePendingRequest(input.id, viewer.email, reason), tx);
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
        await rows(enqueueWebhookEvents(input.id, [{ type: 'approval.revoked' }]), tx);
        return true;
      }
    }
    return false;
  }, TX_OPTIONS);
  const view = await findView(input.id, viewer);
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

/**
 * The API key that staged a request withdraws it while it is still pending (docs/api.md,
 * `POST /api/v1/approvals/{id}/withdraw`): the caller will not make the call after all (a gateway
 * whose client declined the approval link). The revoke lifecycle, with the key as the actor: status
 * `revoked`, audited and announced as a revocation. Another key's request, or a person's call,
 * reads as not found; a request no longer pending is a conflict naming what became of it.
 */
export async function withdrawApproval(actor: Actor, input: RevokeInput): Promise<Result<ApprovalView>> {
  if (!authorize(actor, 'approvals.request')) return fail('forbidden');
  if (actor.kind !== 'apiKey' || !isUuid(input.id)) return fail('not_found');
  const reason = mask(input.reason);
  const by = auditName(actor);
  const withdrawn = await db.$transaction(async (tx) => {
    const count = await affected(withdrawPendingRequest(input.id, actor.keyId, by, reason), tx);
    if (count !== 1) return false;
    await appendAudit(tx, {
      actor: by,
      action: 'approval.withdraw',
      targetType: 'approval',
      targetId: input.id,
      data: { from: 'pending', reason },
    });
    await rows(enqueueWebhookEvents(input.id, [{ type: 'approval.revoked' }]), tx);
    return true;
  }, TX_OPTIONS);
  const view = await findView(input.id, actor, { requestedByKeyId: actor.keyId });
  if (!view) return fail('not_found');
  if (withdrawn) return ok(view);
  return fail('conflict', `${describeSettled(view)} There is nothing left to withdraw.`);
}
