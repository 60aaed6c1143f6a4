import 'server-only';
import { replicaSafe } from '../replica';
import { db } from '../db';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import {
  APPROVAL_PAGE_DEFAULT,
  APPROVAL_PAGE_MAX,
  encodeApprovalCursor,
  isUuid,
  type ApprovalListQuery,
} from '@/lib/approvals/schemas';
import { type ApprovalView } from '@/lib/approvals/view';
import { keysetPage, keysetQuery, pageSize } from '@/lib/pagination/keyset';
import { fail, ok, type Result } from '@/lib/result';
import { findView, readScope, toView, viewSelect, dbNow } from './shared';
import { expireStaleApprovalsNowAndThen } from './expiry';

export async function getApproval(reader: Actor, id: string): Promise<Result<ApprovalView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const view = await findView(id, scope);
  return view ? ok(view) : fail('not_found');
}

export type ApprovalPage = { items: ApprovalView[]; nextCursor: string | null };

// Statuses as read: `pending` excludes what has expired by the database clock, `expired` includes it.
function statusWhere(status: ApprovalListQuery['status'], now: Date): Prisma.ApprovalRequestWhereInput {
  const waiting: Prisma.ApprovalRequestWhereInput = { status: 'pending', expiresAt: { gt: now } };
  switch (status) {
    case undefined:
      return {};
    case 'pending':
      return waiting;
    case 'expired':
      return { OR: [{ status: 'expired' }, { status: 'pending', expiresAt: { lte: now } }] };
    case 'live':
      return {
        OR: [waiting, { status: 'approved', grant: { redeemedAt: null, revokedAt: null, expiresAt: { gt: now } } }],
      };
    default:
      return { status };
  }
}

/**
 * The queue and its history. `pending` runs soonest-to-expire first; everything else newest
 * first. Reads report expiry by the database clock whether or not the sweep has run.
 */
export const listApprovals = replicaSafe(async function listApprovals(
  reader: Actor,
  query: Partial<ApprovalListQuery> = {},
): Promise<Result<ApprovalPage>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  await expireStaleApprovalsNowAndThen();
  const order = query.status === 'pending' ? 'expires' : 'created';
  const { cursor } = query;
  if (cursor && cursor.order !== order)
    return fail('invalid_input', 'The cursor belongs to another listing.', [
      { path: 'cursor', message: 'belongs to a listing with another status' },
    ]);
  const limit = pageSize(query.limit, APPROVAL_PAGE_DEFAULT, APPROVAL_PAGE_MAX);
  const now = await dbNow();
  const page =
    order === 'expires'
      ? keysetQuery('expiresAt', 'asc', cursor, limit)
      : keysetQuery('createdAt', 'desc', cursor, limit);
  const rows = await db.approvalRequest.findMany({
    where: {
      AND: [
        scope,
        statusWhere(query.status, now),
        page.where,
        {
          server: query.server,
          toolName: query.tool,
          principal: query.principal,
          organization: query.organization,
          requestRef: query.requestRef,
        },
      ],
    },
    orderBy: page.orderBy,
    take: page.take,
    select: viewSelect,
  });
  return ok(
    keysetPage(
      rows,
      limit,
      (last) => encodeApprovalCursor({ order, at: order === 'expires' ? last.expiresAt : last.createdAt, id: last.id }),
      (r) => toView(r, now),
    ),
  );
});

/** Requests waiting for a decision now (the queue's badge); 0 for someone who may not see them. */
export async function countPendingApprovals(viewer: Actor): Promise<number> {
  if (!authorize(viewer, 'approvals.read')) return 0;
  return db.approvalRequest.count({ where: statusWhere('pending', await dbNow()) });
}

/** The approval a grant belongs to (an outcome record's grantId), or null: also when the reader may not see it. */
export async function findApprovalIdForGrant(
  reader: Actor,
  grantId: string | null | undefined,
): Promise<string | null> {
  const scope = readScope(reader);
  if (!scope || !grantId || !isUuid(grantId)) return null;
  const grant = await db.grant.findFirst({ where: { id: grantId, approval: scope }, select: { approvalId: true } });
  return grant?.approvalId ?? null;
}
