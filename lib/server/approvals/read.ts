import 'server-only';
import { replicaSafe } from '../db/replica';
import { db } from '../db/db';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import {
  APPROVAL_PAGE_DEFAULT,
  APPROVAL_PAGE_MAX,
  encodeApprovalCursor,
  isUuid,
  type ApprovalListQuery,
  type ApprovalQueue,
} from '@/lib/approvals/schemas';
import type { ApprovalView } from '@/lib/approvals/view';
import { keysetPage, keysetQuery, pageSize } from '@/lib/pagination/keyset';
import { fail, ok, type Result } from '@/lib/result';
import { findView, readScope, toView, viewSelect, dbNow } from './shared';
import { expireStaleApprovalsNowAndThen } from './expiry';
import { namedShowFields, withArguments } from './arguments';

export async function getApproval(reader: Actor, id: string): Promise<Result<ApprovalView>> {
  const scope = readScope(reader);
  if (!scope) return fail('forbidden');
  if (!isUuid(id)) return fail('not_found');
  const view = await findView(id, reader, scope);
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

// What the actor may decide now: a person allowed to decide, not on their own principal, not decided by them.
function decidableBy(actor: Actor): Prisma.ApprovalRequestWhereInput | null {
  if (actor.kind === 'apiKey' || actor.kind === 'system' || !authorize(actor, 'approval.decide')) return null;
  return { principal: { not: actor.principalId }, decisions: { none: { reviewerId: actor.userId } } };
}

const NOTHING: Prisma.ApprovalRequestWhereInput = { id: { in: [] } };

function queueWhere(actor: Actor, queue: ApprovalQueue | undefined): Prisma.ApprovalRequestWhereInput {
  if (!queue) return {};
  const mine = decidableBy(actor);
  if (queue === 'needs_my_decision') return mine ?? NOTHING;
  return mine ? { NOT: mine } : {};
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
  // A queue is a slice of the pending requests.
  const status = query.queue ? (query.status ?? 'pending') : query.status;
  const order = status === 'pending' ? 'expires' : 'created';
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
  // The fields admins named for the preview, read beside the page rather than after it (for those
  // who see previews): one round trip less before the queue can paint.
  const mayRead = authorize(reader, 'approvals.readArguments');
  const [rows, fields] = await Promise.all([
    db.approvalRequest.findMany({
      where: {
        AND: [
          scope,
          statusWhere(status, now),
          status === 'pending' ? queueWhere(reader, query.queue) : query.queue ? NOTHING : {},
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
    }),
    mayRead ? namedShowFields() : undefined,
  ]);
  const pageOf = keysetPage(
    rows,
    limit,
    (last) => encodeApprovalCursor({ order, at: order === 'expires' ? last.expiresAt : last.createdAt, id: last.id }),
    (r) => ({ row: r, view: toView(r, now) }),
  );
  // The queue row's preview: only the arguments a reviewer may see opened (./arguments.ts).
  return ok({
    items: pageOf.items.map(({ row, view }) => withArguments(view, row, reader, { whole: false, fields })),
    nextCursor: pageOf.nextCursor,
  });
});

/**
 * Requests waiting for the viewer's own decision now (the queue's badge, the *needs my decision*
 * tab): 0 for anyone who may not decide, support staff among them.
 */
export async function countPendingApprovals(viewer: Actor): Promise<number> {
  const scope = readScope(viewer);
  const mine = decidableBy(viewer);
  if (!scope || !mine) return 0;
  return db.approvalRequest.count({ where: { AND: [scope, statusWhere('pending', await dbNow()), mine] } });
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
