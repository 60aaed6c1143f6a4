import 'server-only';
import { randomUUID } from 'node:crypto';
import { db, type Tx } from '../db/db';
import { isLockNotAvailable } from '../db/errors';
import { rows } from '../db/kysely';
import { APPROVAL_IDEMPOTENCY_LOCK_CLASS } from '../db/locks';
import { insertGrant, setLockTimeout, transactionNow, tryIdempotencyLock, waitIdempotencyLock } from './sql';
import { appendAudit } from '../audit/audit';
import type { Actor, ApiKeyActor } from '@/lib/auth/actor';
import { checkArguments, maskArguments, type JsonObject } from '@/lib/approvals/arguments';
import { config } from '@/lib/config';
import { authorize } from '@/lib/auth/permissions';
import { policyFor } from '../policy/policy-rules';
import { enqueueWebhookEvents } from '../webhooks/sql';
import { selectPermissionRefusal } from '../guards/sql';
import { checkGuard } from '../guards/guards';
import { guardCheckOf, type GuardAnswer } from '@/lib/guards/schemas';
import { Prisma } from '@/lib/generated/prisma/client';
import { believedHints, policyBasisText } from '@/lib/approvals/policy';
import { idempotencyKeySchema, type ApprovalRequestBody } from '@/lib/approvals/schemas';
import { canonicalJson } from '@/lib/json/canonical';
import { fail, ok, type Result } from '@/lib/result';
import { mask } from '@/lib/redaction/mask';
import { keyActor, TX_OPTIONS } from './shared';
import { keyedHash, seal } from '../secrets';

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

// Keyed (AUTH_SECRET, lib/server/secrets.ts), as for outcome records: the summary may hold personal
// data before masking. Null members left out: `"agent": null` and no agent are the same request.
// The arguments are in the body (their nulls left out too), and so is argsDigest, which covers them
// nulls and all: the same key with other arguments is another body.
// The guard's member is left out: it asks a question of this moment, not part of the request.
const requestHash = ({ guard: _asked, ...body }: ApprovalRequestBody): string =>
  keyedHash('approval-request-hash', canonicalJson(body, { nullMembers: 'omit' }));

/** How long a request waits for the first one with its Idempotency-Key to be stored before answering 409. */
export const IN_FLIGHT_WAIT_MS = 5_000;

/**
 * The arguments as they will be sealed (masked JSON, keys in the order sent), or null when the
 * stager sent none and may (docs/api.md "Approvals and grants"). Refused, naming `arguments`, when
 * missing, not an object, too deep or too large, or not what argsDigest was computed over.
 */
function maskedArguments(body: ApprovalRequestBody): Result<string | null> {
  if (body.arguments == null) {
    if (!config().COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS) return ok(null);
    const message = 'is required: send the object the tool will be called with, the one argsDigest was computed over';
    return fail('arguments_required', `arguments ${message}. Nothing was stored.`, [{ path: 'arguments', message }]);
  }
  const checked = checkArguments(body.arguments, body.argsDigest);
  if (!checked.ok)
    return fail(checked.code, `${checked.message}. Nothing was stored.`, [
      { path: checked.path, message: checked.message },
    ]);
  return ok(JSON.stringify(maskArguments(body.arguments as JsonObject)));
}

type Staged = Result<{ replayed: boolean; approval: ApprovalCreated }>;
/** A guard refused the write: nothing was staged; the refusal is stored as an outcome record. */
export type GuardRefused = { refused: Extract<GuardAnswer, { decision: 'refuse' }> };
const BUSY = Symbol('another request with this Idempotency-Key holds its lock');

/** What staging checked before its transaction: the request's key, hash and sealed-to-be arguments. */
type Prepared = { client: ApiKeyActor; key: string; hash: string; masked: string | null };

/**
 * `POST /api/v1/approvals`: stages a mutation for approval, asking the guards first in the same
 * request when the body carries `guard` (docs/api.md "Guards"): a write they refuse is not staged,
 * and the answer is the refusal. The guards are asked only once the body is known to be valid, so
 * a refused body stores nothing.
 */
export async function stageWrite(
  client: Actor,
  idempotencyKey: string | null,
  body: ApprovalRequestBody,
): Promise<Result<{ replayed: boolean; approval: ApprovalCreated } | GuardRefused>> {
  const prepared = prepare(client, idempotencyKey, body);
  if (!prepared.ok) return prepared;
  if (!body.guard) return stagePrepared(prepared.value, body);
  if (!authorize(client, 'outcomes.write')) {
    const message = 'asking the guards stores outcome records: this API key needs the scope outcomes:write';
    return fail('forbidden', `guard: ${message}. Nothing was stored.`, [{ path: 'guard', message }]);
  }
  const answer = await checkGuard(client, guardCheckOf(body, body.guard));
  if (!answer.ok) {
    const errors = answer.errors?.map((e) => ({ ...e, path: `guard.${e.path}` }));
    return { ...answer, ...(errors ? { errors } : {}) };
  }
  const decided = answer.value;
  if (decided.decision === 'refuse') return ok({ refused: decided });
  return stagePrepared(prepared.value, body, {
    heldFor: decided.decision === 'hold' ? decided.recordId : null,
  });
}

/**
 * Stages a mutation for approval (docs/api.md, `POST /api/v1/approvals`), idempotent per API key and
 * Idempotency-Key: the same body again answers the original response, another body is
 * `idempotency_key_reused` (also when the two arrive at once: the second waits for the first to be
 * stored), and a key whose first request is still being stored after IN_FLIGHT_WAIT_MS is a conflict.
 * Without the guards: a body that asks them goes through stageWrite.
 */
export async function requestApproval(
  client: Actor,
  idempotencyKey: string | null,
  body: ApprovalRequestBody,
): Promise<Staged> {
  if (body.guard) throw new Error('requestApproval: a body that asks the guards is staged by stageWrite');
  const prepared = prepare(client, idempotencyKey, body);
  if (!prepared.ok) return prepared;
  return stagePrepared(prepared.value, body);
}

// The checks that need no database: who may stage, the Idempotency-Key, the arguments.
function prepare(client: Actor, idempotencyKey: string | null, body: ApprovalRequestBody): Result<Prepared> {
  if (!authorize(client, 'approvals.request')) return fail('forbidden');
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
  // Before the hash: checkArguments bounds the depth canonicalJson then walks.
  const masked = maskedArguments(body);
  if (!masked.ok) return masked;
  return ok({ client, key: key.data, hash: requestHash(body), masked: masked.value });
}

/** What the guards already said of a write's request reference: held for an earlier refusal, or not. */
type Asked = { heldFor: string | null };

async function stagePrepared(prepared: Prepared, body: ApprovalRequestBody, asked?: Asked): Promise<Staged> {
  const { client, key, hash, masked } = prepared;
  const lockKey = `${client.keyId}\n${key}`;
  const attempt = (wait: boolean) =>
    db.$transaction(async (tx): Promise<Staged | typeof BUSY> => {
      // Held until commit, when the row is visible. A second request with this key finds the lock
      // taken, then waits (a little) for the first to commit and compares with its row.
      if (wait) {
        await rows(setLockTimeout(IN_FLIGHT_WAIT_MS), tx);
        await rows(waitIdempotencyLock(APPROVAL_IDEMPOTENCY_LOCK_CLASS, lockKey), tx);
        await rows(setLockTimeout(null), tx);
      } else {
        const [{ locked }] = await rows(tryIdempotencyLock(APPROVAL_IDEMPOTENCY_LOCK_CLASS, lockKey), tx);
        if (!locked) return BUSY;
      }
      const existing = await tx.approvalRequest.findUnique({
        where: { requestedByKeyId_idempotencyKey: { requestedByKeyId: client.keyId, idempotencyKey: key } },
        select: createdSelect,
      });
      if (existing) {
        return existing.requestHash === hash
          ? ok({ replayed: true, approval: createdBody(existing) })
          : fail(
              'idempotency_key_reused',
              `The Idempotency-Key "${key}" was already used for a different request (approval ${existing.id}); nothing was stored.`,
            );
      }
      return stage(tx, client, key, body, hash, masked, asked);
    }, TX_OPTIONS);

  const first = await attempt(false);
  if (first !== BUSY) return first;
  try {
    const second = await attempt(true);
    if (second !== BUSY) return second;
  } catch (err) {
    if (!isLockNotAvailable(err)) throw err;
  }
  return fail(
    'conflict',
    'A request with this Idempotency-Key is still being processed; retry in a moment for its answer.',
  );
}

// The request's row, audit entry, grant when no approval is needed, and outbox events.
async function stage(
  tx: Tx,
  client: ApiKeyActor,
  idempotencyKey: string,
  body: ApprovalRequestBody,
  hash: string,
  maskedArgs: string | null,
  asked?: Asked,
): Promise<Staged> {
  const serverTrusted = (await tx.trustedServer.count({ where: { name: body.server } })) > 0;
  const verdict = await policyFor(tx, {
    server: body.server,
    toolName: body.tool.name,
    annotations: body.tool.annotations,
    serverTrusted,
  });
  // Exposing a tool is a policy decision (seed 001): no approval can let a blocked tool run.
  if (verdict.blocked)
    return fail(
      'forbidden',
      `The tool "${body.tool.name}" of server "${body.server}" is blocked by policy; no approval can be requested for it.`,
    );
  const [{ now }] = await rows(transactionNow(), tx);
  // A write after a permission refusal in its request waits for a person, whatever the policy
  // (docs/design.md "Guards at the point of execution"): recovery never widens what was refused.
  let requiredApprovals = verdict.requiredApprovals;
  let heldFor: string | null = null;
  // The guards, when asked in this request, have read it already (their last row).
  if (requiredApprovals === 0 && !believedHints(body.tool.annotations, serverTrusted).readOnly) {
    const refusal = asked
      ? asked.heldFor
      : (await rows(selectPermissionRefusal(body.requestRef, body.organization), tx))[0]?.id;
    if (refusal) [requiredApprovals, heldFor] = [1, refusal];
  }
  const autoApproved = requiredApprovals === 0;
  const annotations = body.tool.annotations && {
    ...body.tool.annotations,
    title: mask(body.tool.annotations.title),
  };
  // Made here, so that the sealed arguments are bound to their row before it exists.
  const id = randomUUID();
  await tx.approvalRequest.create({
    data: {
      id,
      requestRef: body.requestRef,
      organization: body.organization,
      principal: body.principal,
      agent: mask(body.agent),
      server: body.server,
      toolName: body.tool.name,
      toolAnnotations: annotations ?? Prisma.DbNull,
      toolDescription: mask(body.tool.description) ?? null,
      annotationsTrusted: serverTrusted,
      argsDigest: body.argsDigest,
      argumentsSent: maskedArgs !== null,
      argumentsSealed: maskedArgs === null ? null : seal('approval-arguments', maskedArgs, id),
      summary: mask(body.summary),
      resourceType: mask(body.resource?.type),
      resourceId: mask(body.resource?.id),
      requiredApprovals,
      status: autoApproved ? 'approved' : 'pending',
      expiresAt: new Date(now.getTime() + body.pendingTtlSeconds * 1000),
      grantTtlSeconds: body.grantTtlSeconds,
      requestedByKeyId: client.keyId,
      idempotencyKey,
      requestHash: hash,
      createdAt: now,
      decidedAt: autoApproved ? now : null,
    },
    select: { id: true },
  });
  // The digest, never the arguments (docs/design.md "What a reviewer sees: what will run").
  await appendAudit(tx, {
    actor: keyActor(client),
    action: 'approval.request',
    targetType: 'approval',
    targetId: id,
    data: {
      requestRef: body.requestRef,
      organization: body.organization,
      principal: body.principal,
      server: body.server,
      tool: body.tool.name,
      argsDigest: body.argsDigest,
      argumentsSent: maskedArgs !== null,
      requiredApprovals,
      policy: heldFor
        ? `a permission was refused earlier in this request (record ${heldFor})`
        : policyBasisText[verdict.basis],
      ...(heldFor ? { heldFor } : {}),
      annotationsTrusted: serverTrusted,
      apiKey: client.name,
    },
  });
  if (autoApproved)
    await issueGrant(tx, id, keyActor(client), `no approval required: ${policyBasisText[verdict.basis]}`);
  // The outbox, in this transaction (lib/server/webhooks/worker.ts delivers it).
  const approved = autoApproved ? [{ type: 'approval.approved', extra: { approvals: 0 } }] : [];
  await rows(enqueueWebhookEvents(id, [{ type: 'approval.requested' }, ...approved]), tx);
  return ok({
    replayed: false,
    approval: createdBody(await tx.approvalRequest.findUniqueOrThrow({ where: { id }, select: createdSelect })),
  });
}

/** Issues the grant of a request just approved, inside the caller's transaction (database clock). */
export async function issueGrant(tx: Tx, approvalId: string, actor: string, why: string): Promise<void> {
  const [grant] = await rows(insertGrant(approvalId), tx);
  await appendAudit(tx, {
    actor,
    action: 'grant.issue',
    targetType: 'approval',
    targetId: approvalId,
    data: { grantId: grant.id, expiresAt: grant.expires_at.toISOString(), why },
  });
}
