import 'server-only';
import { db } from './db';
import { auditAppendArgs } from './audit';
import { dbNow, keyActor, refusedByDatabase } from './approvals';
import type { ApiClient } from './credentials';
import { isUuid, type RedeemBody } from '@/lib/approvals/schemas';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

export type Redemption = { grantId: string; approvalId: string; redeemedAt: Date; server: string; tool: string; argsDigest: string };

const fieldLabel = { server: 'server', tool: 'tool', argsDigest: 'argument digest' } as const;

/**
 * The execution step presents a grant (API.md, `POST /api/v1/grants/{grantId}/redeem`): one
 * conditional update, unredeemed, unrevoked, unexpired by the database clock and bound to the same
 * server, tool and argument digest, which also moves the request to redeemed and appends the
 * audit entry, in one statement (one round trip, no interactive transaction). It succeeds once.
 */
export async function redeemGrant(client: ApiClient, grantId: string, body: RedeemBody): Promise<Result<Redemption>> {
  if (client.kind !== 'apiKey' || !client.scopes.includes('grants:redeem')) return fail('forbidden');
  if (!isUuid(grantId)) return fail('not_found');
  // The audit entry's target, the approval, is filled in by the database.
  const entry = {
    actor: keyActor(client), action: 'grant.redeem', targetType: 'approval', targetId: '',
    data: { grantId, server: body.server, tool: body.tool, argsDigest: body.argsDigest, apiKey: client.name },
  };
  const audit = auditAppendArgs(entry, ['at', 'seq', 'targetId']);
  // One statement, its own transaction: the grant, the request and the audit entry together
  // (redeem_grant in prisma/migrations/…_audit_append_in_sql). No row: not redeemable now.
  const redeemed = await db.$queryRaw<{ approval_id: string; redeemed_at: Date }[]>`
    SELECT approval_id, redeemed_at FROM redeem_grant(${grantId}::uuid, ${client.keyId}::uuid, ${client.organization}::text,
      ${body.server}, ${body.tool}, ${body.argsDigest}, ${entry.actor}, ${entry.action}, ${entry.targetType}, ${audit.data}::jsonb, ${audit.canonical}::text[])`
    .then(([row]) => row ?? null, (err: unknown) => {
      if (refusedByDatabase(err)) return null;
      throw err;
    });
  if (redeemed) {
    return ok({ grantId, approvalId: redeemed.approval_id, redeemedAt: redeemed.redeemed_at, server: body.server, tool: body.tool, argsDigest: body.argsDigest });
  }
  return explainRefusedRedemption(client, grantId, body);
}

async function explainRefusedRedemption(client: Extract<ApiClient, { kind: 'apiKey' }>, grantId: string, body: RedeemBody): Promise<Result<never>> {
  const grant = await db.grant.findFirst({
    where: { id: grantId, ...(client.organization === null ? {} : { approval: { organization: client.organization } }) },
    select: { server: true, toolName: true, argsDigest: true, expiresAt: true, redeemedAt: true, revokedAt: true, approval: { select: { revokedBy: true, revokeReason: true } } },
  });
  if (!grant) return fail('not_found');
  if (grant.redeemedAt) return fail('conflict', `This grant was already redeemed at ${grant.redeemedAt.toISOString()}; a grant is used once.`);
  if (grant.revokedAt) {
    const by = grant.approval.revokedBy ? ` by ${grant.approval.revokedBy}` : '';
    const why = grant.approval.revokeReason ? `: "${grant.approval.revokeReason}"` : '';
    return fail('gone', `This grant was revoked at ${grant.revokedAt.toISOString()}${by}${why}.`);
  }
  if (grant.expiresAt <= (await dbNow())) return fail('gone', `This grant expired at ${grant.expiresAt.toISOString()}; request a new approval.`);
  // Which field differs, never what was approved.
  const differing: FieldError[] = [];
  if (grant.server !== body.server) differing.push({ path: 'server', message: 'differs from the approved server' });
  if (grant.toolName !== body.tool) differing.push({ path: 'tool', message: 'differs from the approved tool' });
  if (grant.argsDigest !== body.argsDigest) differing.push({ path: 'argsDigest', message: 'differs from the approved argument digest' });
  if (differing.length) {
    const names = differing.map((e) => fieldLabel[e.path as keyof typeof fieldLabel]).join(', ');
    return fail('invalid_input', `This grant does not cover this call: the ${names} differ${differing.length === 1 ? 's' : ''} from what was approved. Nothing was redeemed.`, differing);
  }
  return fail('conflict', 'This grant changed while it was being redeemed; read its approval and try again.');
}
