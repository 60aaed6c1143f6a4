import 'server-only';
import { db, type Tx } from '../db/db';
import { isCheckViolation, isUniqueViolation } from '../db/errors';
import { rows } from '../db/kysely';
import { clockNow } from './sql';
import { Prisma } from '@/lib/generated/prisma/client';
import { authorize } from '@/lib/auth/permissions';
import { auditName, organizationOf, type Actor, type ApiKeyActor } from '@/lib/auth/actor';
import { argumentsAbsence, toApprovalView, type ApprovalView } from '@/lib/approvals/view';
import { showFieldsFor, withArguments } from './arguments';

// Every expiry is judged by the database's clock, never the app server's: instances disagree.
export async function dbNow(tx: Tx | typeof db = db): Promise<Date> {
  const [{ now }] = await rows(clockNow(), tx);
  return now;
}

// Contended approvals queue for a row lock: wait for a connection and the lock longer than the default.
export const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

export const keyActor = (client: ApiKeyActor) => auditName(client);

/**
 * True when the database refused a change through one of its approval invariants (a CHECK or
 * trigger, or a unique key): the code's own guard passed a moment before, so the clock moved on
 * (an expiry) or a rival won. The caller explains the refusal as it explains a lost race.
 */
export function refusedByDatabase(err: unknown): boolean {
  return isCheckViolation(err) || isUniqueViolation(err);
}

// What the reader may see: null when nothing; an organization-limited key only its own.
export function readScope(reader: Actor): Prisma.ApprovalRequestWhereInput | null {
  if (!authorize(reader, 'approvals.read')) return null;
  const organization = organizationOf(reader);
  return organization === null ? {} : { organization };
}

// Never the request hash or the requesting key; the sealed arguments only to open for those who may
// read them (./arguments.ts), never into a view as they are.
export const viewSelect = {
  id: true,
  requestRef: true,
  idempotencyKey: true,
  organization: true,
  principal: true,
  agent: true,
  server: true,
  toolName: true,
  toolAnnotations: true,
  toolDescription: true,
  annotationsTrusted: true,
  argsDigest: true,
  argumentsSent: true,
  argumentsSealed: true,
  summary: true,
  resourceType: true,
  resourceId: true,
  requiredApprovals: true,
  status: true,
  version: true,
  expiresAt: true,
  grantTtlSeconds: true,
  createdAt: true,
  decidedAt: true,
  revokedAt: true,
  revokedBy: true,
  revokeReason: true,
  decisions: {
    select: { reviewerEmail: true, decision: true, reason: true, at: true },
    orderBy: [{ at: 'asc' }, { id: 'asc' }],
  },
  grant: { select: { id: true, issuedAt: true, expiresAt: true, redeemedAt: true, revokedAt: true } },
} satisfies Prisma.ApprovalRequestSelect;
export type ViewRow = Prisma.ApprovalRequestGetPayload<{ select: typeof viewSelect }>;

/** The view as anyone sees it, arguments aside (withArguments adds them for those who may read them). */
export const toView = (r: ViewRow, now: Date): ApprovalView =>
  toApprovalView(
    {
      ...r,
      decisions: r.decisions.map((d) => ({
        reviewer: d.reviewerEmail,
        decision: d.decision,
        reason: d.reason,
        at: d.at,
      })),
    },
    now,
  );

/** One request as `reader` sees it, its arguments included when they may read them. */
export async function findView(
  id: string,
  reader: Actor,
  scope: Prisma.ApprovalRequestWhereInput = {},
): Promise<ApprovalView | null> {
  const row = await db.approvalRequest.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  if (!row) return null;
  const view = toView(row, await dbNow());
  const shown = argumentsAbsence(view, authorize(reader, 'approvals.readArguments')) === null;
  return withArguments(view, row, reader, { whole: true, fields: shown ? await showFieldsFor([view]) : undefined });
}
