import 'server-only';
import { createHmac } from 'node:crypto';
import { db, type Tx } from './db';
import { appendAudit } from './audit';
import type { ApiClient } from './credentials';
import { policyFor } from './policy-rules';
import { notificationsEnabled, notifyApprovalRequested, notifyDecision } from '../jobs/notify';
import { Prisma } from '@/lib/generated/prisma/client';
import { can, type Viewer } from '@/lib/auth/permissions';
import { policyBasisText } from '@/lib/approvals/policy';
import {
  APPROVAL_PAGE_DEFAULT,
  APPROVAL_PAGE_MAX,
  encodeApprovalCursor,
  idempotencyKeySchema,
  isUuid,
  type ApprovalListQuery,
  type ApprovalRequestBody,
  type DecisionBody,
  type RevokeBody,
} from '@/lib/approvals/schemas';
import { describeDecisions, describeSettled, toApprovalView, type ApprovalView } from '@/lib/approvals/view';
import { canonicalJson } from '@/lib/json/canonical';
import { maskText } from '@/lib/redaction/mask';
import { fail, ok, type Result } from '@/lib/result';

export type { ApprovalView, DecisionView, GrantView } from '@/lib/approvals/view';
export { listPolicyRules, setPolicyRule, deletePolicyRule, type PolicyRuleView } from './policy-rules';

// ── Shared ──────────────────────────────────────────────────────────────────────────────────

// Every expiry is judged by the database's clock, never the app server's: instances disagree.
export async function dbNow(tx: Tx | typeof db = db): Promise<Date> {
  const [{ now }] = await tx.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
  return now;
}

// Contended approvals queue for a row lock: wait for a connection and the lock longer than the default.
export const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

export const keyActor = (client: Extract<ApiClient, { kind: 'apiKey' }>) => `api_key:${client.keyId}`;

/**
 * True when the database refused a change through one of its approval invariants (a CHECK or
 * trigger, or a unique key): the code's own guard passed a moment before, so the clock moved on
 * (an expiry) or a rival won. The caller explains the refusal as it explains a lost race.
 */
export function refusedByDatabase(err: unknown): boolean {
  const cause = (err as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } } | null)?.meta
    ?.driverAdapterError?.cause;
  return cause?.originalCode === '23514' || cause?.originalCode === '23505';
}

const mask = <T extends string | null | undefined>(s: T) => (s ? maskText(s).text : s) as T;

/** A person (session or personal token), or an API key with a scope that may read approvals. */
export type ApprovalReader = ApiClient | Viewer;

// What the reader may see: null when nothing; an organization-limited key only its own.
function readScope(reader: ApprovalReader): Prisma.ApprovalRequestWhereInput | null {
  if (!('kind' in reader)) return can(reader, 'approvals.read') ? {} : null;
  if (reader.kind === 'user') return can(reader.viewer, 'approvals.read') ? {} : null;
  if (!reader.scopes.includes('approvals:request') && !reader.scopes.includes('grants:redeem')) return null;
  return reader.organization === null ? {} : { organization: reader.organization };
}

// Never the request hash or the requesting key.
const viewSelect = {
  id: true,
  requestRef: true,
  idempotencyKey: true,
  organization: true,
  principal: true,
  agent: true,
  server: true,
  toolName: true,
  toolAnnotations: true,
  annotationsTrusted: true,
  argsDigest: true,
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
type ViewRow = Prisma.ApprovalRequestGetPayload<{ select: typeof viewSelect }>;

const toView = (r: ViewRow, now: Date): ApprovalView =>
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

async function findView(id: string, scope: Prisma.ApprovalRequestWhereInput = {}): Promise<ApprovalView | null> {
  const row = await db.approvalRequest.findFirst({ where: { AND: [scope, { id }] }, select: viewSelect });
  return row && toView(row, await dbNow());
}

// ── Requesting ──────────────────────────────────────────────────────────────────────────────

/** The 201 body of `POST /api/v1/approvals`; a replay gets the same one again. */
export type ApprovalCreated = {
  id: string;
  status: 'pending' | 'approved';
  requiredApprovals: number;
  expiresAt: Date;
  version: number;
  /** Only when policy required no approval: the grant issued at once. */
  grant: { id: string; expiresAt: Date } | null;
};

const createdSelect = {
  id: true,
  requiredApprovals: true,
  expiresAt: true,
  requestHash: true,
  grant: { select: { id: true, expiresAt: true } },
} satisfies Prisma.ApprovalRequestSelect;

// Rebuilt from the row as it was answered: born approved only when no approval was needed.
const createdBody = (r: Prisma.ApprovalRequestGetPayload<{ select: typeof createdSelect }>): ApprovalCreated => ({
  id: r.id,
  status: r.requiredApprovals === 0 ? 'approved' : 'pending',
  requiredApprovals: r.requiredApprovals,
  expiresAt: r.expiresAt,
  version: 1,
  grant: r.requiredApprovals === 0 && r.grant ? { id: r.grant.id, expiresAt: r.grant.expiresAt } : null,
});

// Keyed (AUTH_SECRET), as for outcome records: the summary may hold personal data before masking.
function requestHash(body: ApprovalRequestBody): string {
  const secret = process.env.AUTH_SECRET;
  if (!secret) throw new Error('AUTH_SECRET is not set: approval requests cannot be hashed');
  // Null members left out: `"agent": null` and no agent are the same request.
  return createHmac('sha256', `countersign:approval-request:v1:${secret}`)
    .update(canonicalJson(body, { nullMembers: 'omit' }))
    .digest('hex');
}

// Namespace of the two-key advisory locks that mark an idempotency key in flight.
const IDEMPOTENCY_LOCK = 0x61707072;

/**
 * Stages a mutation for approval (API.md, `POST /api/v1/approvals`), idempotent per API key and
 * Idempotency-Key: the same body again answers the original response, another body is
 * `idempotency_key_reused`, and a key whose first request is still being stored is a conflict.
 */
export async function requestApproval(
  client: ApiClient,
  idempotencyKey: string | null,
  body: ApprovalRequestBody,
): Promise<Result<{ replayed: boolean; approval: ApprovalCreated }>> {
  if (client.kind !== 'apiKey' || !client.scopes.includes('approvals:request')) return fail('forbidden');
  if (client.organization !== null && body.organization !== client.organization) {
    const message = `this API key may only request approvals for the organization "${client.organization}"`;
    return fail('forbidden', `organization: ${message}.`, [{ path: 'organization', message }]);
  }
  if (idempotencyKey === null || idempotencyKey.trim() === '') {
    return fail(
      'idempotency_key_required',
      "Send an Idempotency-Key header: the operation's own key, the same on every retry of this request.",
    );
  }
  const key = idempotencyKeySchema.safeParse(idempotencyKey);
  if (!key.success)
    return fail('invalid_input', 'The Idempotency-Key header is invalid.', [
      { path: 'Idempotency-Key', message: key.error.issues[0].message },
    ]);
  const hash = requestHash(body);

  const result = await db.$transaction(
    async (tx): Promise<Result<{ replayed: boolean; approval: ApprovalCreated }>> => {
      // Held until commit, when the row is visible: a second request with this key either waits
      // for nothing (it is refused at once) or finds the committed row.
      const [{ locked }] = await tx.$queryRaw<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(${IDEMPOTENCY_LOCK}::int, hashtext(${`${client.keyId}\n${key.data}`})) AS locked`;
      if (!locked)
        return fail(
          'conflict',
          'A request with this Idempotency-Key is still being processed; retry in a moment for its answer.',
        );
      const existing = await tx.approvalRequest.findUnique({
        where: { requestedByKeyId_idempotencyKey: { requestedByKeyId: client.keyId, idempotencyKey: key.data } },
        select: createdSelect,
      });
      if (existing) {
        return existing.requestHash === hash
          ? ok({ replayed: true, approval: createdBody(existing) })
          : fail(
              'idempotency_key_reused',
              `The Idempotency-Key "${key.data}" was already used for a different request (approval ${existing.id}); nothing was stored.`,
            );
      }

      const serverTrusted = (await tx.trustedServer.count({ where: { name: body.server } })) > 0;
      const verdict = await policyFor(tx, {
        server: body.server,
        toolName: body.tool.name,
        annotations: body.tool.annotations,
        serverTrusted,
      });
      const [{ now }] = await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
      const autoApproved = verdict.requiredApprovals === 0;
      const annotations = body.tool.annotations && {
        ...body.tool.annotations,
        title: mask(body.tool.annotations.title),
      };
      const created = await tx.approvalRequest.create({
        data: {
          requestRef: body.requestRef,
          organization: body.organization,
          principal: body.principal,
          agent: mask(body.agent),
          server: body.server,
          toolName: body.tool.name,
          toolAnnotations: annotations ?? Prisma.DbNull,
          annotationsTrusted: serverTrusted,
          argsDigest: body.argsDigest,
          summary: mask(body.summary),
          resourceType: mask(body.resource?.type),
          resourceId: mask(body.resource?.id),
          requiredApprovals: verdict.requiredApprovals,
          status: autoApproved ? 'approved' : 'pending',
          expiresAt: new Date(now.getTime() + body.pendingTtlSeconds * 1000),
          grantTtlSeconds: body.grantTtlSeconds,
          requestedByKeyId: client.keyId,
          idempotencyKey: key.data,
          requestHash: hash,
          createdAt: now,
          decidedAt: autoApproved ? now : null,
        },
        select: { id: true },
      });
      await appendAudit(tx, {
        actor: keyActor(client),
        action: 'approval.request',
        targetType: 'approval',
        targetId: created.id,
        data: {
          requestRef: body.requestRef,
          organization: body.organization,
          principal: body.principal,
          server: body.server,
          tool: body.tool.name,
          argsDigest: body.argsDigest,
          requiredApprovals: verdict.requiredApprovals,
          policy: policyBasisText[verdict.basis],
          annotationsTrusted: serverTrusted,
          apiKey: client.name,
        },
      });
      if (autoApproved)
        await issueGrant(tx, created.id, keyActor(client), `no approval required: ${policyBasisText[verdict.basis]}`);
      return ok({
        replayed: false,
        approval: createdBody(
          await tx.approvalRequest.findUniqueOrThrow({ where: { id: created.id }, select: createdSelect }),
        ),
      });
    },
    TX_OPTIONS,
  );
  // Notifications go out after the commit, in the background: they never delay or fail the request.
  if (result.ok && !result.value.replayed && result.value.approval.status === 'pending' && notificationsEnabled()) {
    void findView(result.value.approval.id).then(
      (view) => view && notifyApprovalRequested(view),
      () => {},
    );
  }
  return result;
}

/** Issues the grant of a request just approved, inside the caller's transaction (database clock). */
async function issueGrant(tx: Tx, approvalId: string, actor: string, why: string): Promise<void> {
  const [grant] = await tx.$queryRaw<{ id: string; expires_at: Date }[]>`
    INSERT INTO grants (approval_id, server, tool_name, args_digest, expires_at)
    SELECT id, server, tool_name, args_digest, now() + make_interval(secs => grant_ttl_seconds)
    FROM approval_requests WHERE id = ${approvalId}::uuid
    RETURNING id, expires_at`;
  await appendAudit(tx, {
    actor,
    action: 'grant.issue',
    targetType: 'approval',
    targetId: approvalId,
    data: { grantId: grant.id, expiresAt: grant.expires_at.toISOString(), why },
  });
}

// ── Reading ─────────────────────────────────────────────────────────────────────────────────

export async function getApproval(reader: ApprovalReader, id: string): Promise<Result<ApprovalView>> {
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
export async function listApprovals(
  reader: ApprovalReader,
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
  const limit = Math.max(1, Math.min(query.limit ?? APPROVAL_PAGE_DEFAULT, APPROVAL_PAGE_MAX));
  const now = await dbNow();
  const after: Prisma.ApprovalRequestWhereInput = !cursor
    ? {}
    : order === 'expires'
      ? { OR: [{ expiresAt: { gt: cursor.at } }, { expiresAt: cursor.at, id: { gt: cursor.id } }] }
      : { OR: [{ createdAt: { lt: cursor.at } }, { createdAt: cursor.at, id: { lt: cursor.id } }] };
  const rows = await db.approvalRequest.findMany({
    where: {
      AND: [
        scope,
        statusWhere(query.status, now),
        after,
        {
          server: query.server,
          toolName: query.tool,
          principal: query.principal,
          organization: query.organization,
          requestRef: query.requestRef,
        },
      ],
    },
    orderBy: order === 'expires' ? [{ expiresAt: 'asc' }, { id: 'asc' }] : [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
    select: viewSelect,
  });
  const items = rows.slice(0, limit).map((r) => toView(r, now));
  const last = items.at(-1);
  const nextCursor =
    rows.length > limit && last
      ? encodeApprovalCursor({ order, at: order === 'expires' ? last.expiresAt : last.createdAt, id: last.id })
      : null;
  return ok({ items, nextCursor });
}

/** Requests waiting for a decision now (the queue's badge); 0 for someone who may not see them. */
export async function countPendingApprovals(viewer: Viewer): Promise<number> {
  if (!can(viewer, 'approvals.read')) return 0;
  return db.approvalRequest.count({ where: statusWhere('pending', await dbNow()) });
}

/** The approval a grant belongs to (an outcome record's grantId), or null: also when the reader may not see it. */
export async function findApprovalIdForGrant(
  reader: ApprovalReader,
  grantId: string | null | undefined,
): Promise<string | null> {
  const scope = readScope(reader);
  if (!scope || !grantId || !isUuid(grantId)) return null;
  const grant = await db.grant.findFirst({ where: { id: grantId, approval: scope }, select: { approvalId: true } });
  return grant?.approvalId ?? null;
}

// ── Deciding ────────────────────────────────────────────────────────────────────────────────

export type DecisionInput = DecisionBody & { id: string };

/**
 * One reviewer's decision (API.md, `POST /api/v1/approvals/{id}/decisions`): a conditional update
 * on pending, unexpired, the version the reviewer saw, not the reviewer's own request and not
 * decided by them before. The loser of a race gets a conflict naming who decided what and when.
 */
export async function decideApproval(viewer: Viewer, input: DecisionInput): Promise<Result<ApprovalView>> {
  if (!can(viewer, 'approval.decide')) return fail('forbidden');
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

// ── Revoking ────────────────────────────────────────────────────────────────────────────────

export type RevokeInput = RevokeBody & { id: string };

/**
 * An admin withdraws a pending request or an approved, unredeemed grant, at once (API.md,
 * `POST /api/v1/approvals/{id}/revoke`). Locks the grant before the request, as redemption does,
 * so the two never deadlock and never both succeed.
 */
export async function revokeApproval(viewer: Viewer, input: RevokeInput): Promise<Result<ApprovalView>> {
  if (!can(viewer, 'approval.revoke')) return fail('forbidden');
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

// ── Expiry ──────────────────────────────────────────────────────────────────────────────────

/**
 * Marks pending requests past their expiry (database clock) as expired, with an audit entry
 * each. Reads never depend on it: they already report such requests as expired.
 */
export async function expireStaleApprovals(batch = 500): Promise<number> {
  return db.$transaction(
    async (tx) => {
      const expired = await tx.$queryRaw<{ id: string; expires_at: Date }[]>`
      UPDATE approval_requests SET status = 'expired', version = version + 1
      WHERE id IN (
        SELECT id FROM approval_requests WHERE status = 'pending' AND expires_at <= clock_timestamp()
        ORDER BY expires_at LIMIT ${batch}::int FOR UPDATE SKIP LOCKED)
      AND status = 'pending'
      RETURNING id, expires_at`;
      for (const r of expired) {
        await appendAudit(tx, {
          actor: 'system',
          action: 'approval.expire',
          targetType: 'approval',
          targetId: r.id,
          data: { expiresAt: r.expires_at.toISOString() },
        });
      }
      return expired.length;
    },
    { ...TX_OPTIONS, timeout: 60_000 },
  );
}

const SWEEP_INTERVAL_MS = 60_000;
const sweep = globalThis as unknown as { countersignApprovalSweepAt?: number };

// From the list reads, at most once a minute per process: cheap, and no timer to manage.
async function expireStaleApprovalsNowAndThen(): Promise<void> {
  const last = sweep.countersignApprovalSweepAt ?? 0;
  if (Date.now() - last < SWEEP_INTERVAL_MS) return;
  sweep.countersignApprovalSweepAt = Date.now();
  try {
    await expireStaleApprovals();
  } catch (err) {
    // Only bookkeeping: the read itself already reports the right status.
    console.error('[approvals] expiring stale requests failed', err);
  }
}
