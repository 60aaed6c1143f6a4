// For the hostile-input tests: real credentials (API keys and personal tokens, sent as bearer, so
// everything but Next's own routing runs as in production) and a valid body for each route.
import { apiScopes } from '@/lib/credentials/scopes';
import { createApiKey, createPersonalToken } from '@/lib/server/credentials/credentials';
import { setPolicyRule } from '@/lib/server/policy/policy-rules';
import { api, call, expectOk } from '@/testing/api-harness';
import { makeUser, uniq } from '@/testing/factories';
import { cli } from '@/lib/auth/actor';
import { ARGUMENTS, ARGUMENTS_DIGEST } from './approvals-arguments';

// The arguments an approval request carries, and their digest (testing/approvals-arguments.ts).
export const ARGS = ARGUMENTS;
export const DIGEST = ARGUMENTS_DIGEST;
/** Requests to this server need no approval: their grant is issued at once (for redeem tests). */
export const AUTO_SERVER = 'fuzz-auto-mcp';

export type Actors = { key: string; admin: string; reviewer: string };

export async function makeActors(): Promise<Actors> {
  const key = await createApiKey(cli, { name: uniq('fuzz-key'), scopes: [...apiScopes] });
  const admin = await makeUser('admin');
  const reviewer = await makeUser('reviewer');
  const adminToken = await createPersonalToken(cli, admin.userId, 'fuzz');
  const reviewerToken = await createPersonalToken(cli, reviewer.userId, 'fuzz');
  const rule = await setPolicyRule(cli, { server: AUTO_SERVER, tool: null, requiredApprovals: 0 });
  if (!key.ok || !adminToken.ok || !reviewerToken.ok || !rule.ok) throw new Error('makeActors: set-up failed');
  return { key: key.value.secret, admin: adminToken.value.secret, reviewer: reviewerToken.value.secret };
}

/** An outcome record with every field the schema knows, sent and answered. */
export function fullRecord() {
  return {
    eventId: uniq('evt'),
    occurredAt: '2026-11-30T12:00:00Z',
    durationMs: 812,
    requestRef: uniq('req'),
    idempotencyKey: uniq('idem'),
    attempt: 1,
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    serverVersion: '2.3.0',
    protocolVersion: '2025-11-25',
    tool: {
      name: 'refund_payment',
      annotations: {
        title: 'Refund a payment',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    mcpRequestId: 'mcp-17',
    sessionId: uniq('sess'),
    grantId: uniq('grt'),
    argsDigest: DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
    observed: {
      sent: true,
      httpStatus: 401,
      authError: 'invalid_token',
      jsonRpcErrorCode: -32000,
      clientError: 'timeout',
      result: { isError: true, errorCategory: 'validation', outputValidation: 'invalid' },
    },
  };
}

/** The fields only a record that was never sent may carry. */
export function blockedRecord() {
  return { ...fullRecord(), observed: { sent: false, clientBlock: 'approval_required' } };
}

export function approvalBody(over: Record<string, unknown> = {}) {
  return {
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: {
      name: 'refund_payment',
      annotations: {
        title: 'Refund a payment',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    argsDigest: DIGEST,
    arguments: ARGS,
    summary: 'Refund 40.00 EUR on order 4411',
    resource: { type: 'order', id: 'order-4411' },
    pendingTtlSeconds: 3600,
    grantTtlSeconds: 900,
    ...over,
  };
}

export async function newApproval(
  actors: Actors,
  over: Record<string, unknown> = {},
): Promise<{ id: string; grantId: string | null }> {
  const r = await call(api.postApproval, {
    token: actors.key,
    body: approvalBody(over),
    headers: { 'idempotency-key': uniq('idem') },
  });
  expectOk(r, [201]);
  return { id: r.json.id, grantId: r.json.grant?.id ?? null };
}

/** A live grant for `redeemBody()`. */
export async function newGrant(actors: Actors): Promise<string> {
  const { grantId } = await newApproval(actors, { server: AUTO_SERVER });
  if (!grantId) throw new Error('newGrant: the policy rule did not issue a grant');
  return grantId;
}

export const redeemBody = () => ({ server: AUTO_SERVER, tool: 'refund_payment', argsDigest: DIGEST });
