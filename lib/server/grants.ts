import 'server-only';
import { db } from './db';
import { appendAudit } from './audit';
import { dbNow, keyActor, refusedByDatabase, TX_OPTIONS } from './approvals';
import type { ApiClient } from './credentials';
import { isUuid, type RedeemBody } from '@/lib/approvals/schemas';
import { fail, ok, type FieldError, type Result } from '@/lib/result';

export type Redemption = { grantId: string; approvalId: string; redeemedAt: Date; server: string; tool: string; argsDigest: string };

const fieldLabel = { server: 'server', tool: 'tool', argsDigest: 'argument digest' } as const;

/**
 * The execution step presents a grant (API.md, `POST /api/v1/grants/{grantId}/redeem`): one
 * conditional update, unredeemed, unrevoked, unexpired by the database clock and bound to the same
 * server, tool and argument digest, which also moves the request to redeemed. It succeeds once.
 */
export async function redeemGrant(client: ApiClient, grantId: string, body: RedeemBody): Promise<Result<Redemption>> {
  if (client.kind !== 'apiKey' || !client.scopes.includes('grants:redeem')) return fail('forbidden');
  if (!isUuid(grantId)) return fail('not_found');
  const org = client.organization;
  const redeemed = await db.$transaction(async (tx) => {
    const [grant] = await tx.$queryRaw<{ approval_id: string; redeemed_at: Date }[]>`
      UPDATE grants g SET redeemed_at = clock_timestamp(), redeemed_by_key_id = ${client.keyId}::uuid
      WHERE g.id = ${grantId}::uuid AND g.redeemed_at IS NULL AND g.revoked_at IS NULL AND g.expires_at > clock_timestamp()
        AND g.server = ${body.server} AND g.tool_name = ${body.tool} AND g.args_digest = ${body.argsDigest}
        AND (${org}::text IS NULL OR EXISTS (SELECT 1 FROM approval_requests r WHERE r.id = g.approval_id AND r.organization = ${org}::text))
      RETURNING g.approval_id, g.redeemed_at`;
    if (!grant) return null;
    const moved = await tx.$executeRaw`
      UPDATE approval_requests SET status = 'redeemed', version = version + 1 WHERE id = ${grant.approval_id}::uuid AND status = 'approved'`;
    if (moved !== 1) throw new Error(`invariant: the redeemable grant ${grantId} belongs to a request that is not approved`);
    await appendAudit(tx, {
      actor: keyActor(client), action: 'grant.redeem', targetType: 'approval', targetId: grant.approval_id,
      data: { grantId, server: body.server, tool: body.tool, argsDigest: body.argsDigest, apiKey: client.name },
    });
    return grant;
  }, TX_OPTIONS).catch((err: unknown) => {
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
