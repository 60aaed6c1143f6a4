// Shared set-up of the approvals API specs (e2e/approvals-api-*.spec.ts): keys and personal tokens
// made with the CLI, request bodies, and the calls the specs make.
import { expect, test, type APIRequestContext } from '@playwright/test';
import { cli, secretFrom, users } from './e2e';
import { ARGUMENTS, ARGUMENTS_DIGEST } from './approvals-arguments';

export let requestKey = '';
export let redeemKey = '';
export let outcomesKey = '';
export const tokens = { reviewer: '', reviewer2: '', admin: '', support: '' };

export function setUpApprovalsApi() {
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    const apiKey = (name: string, scopes: string) =>
      secretFrom(cli('apikeys:create', '--name', `e2e-${name}-${Date.now()}`, '--scopes', scopes), 'cs_live_');
    requestKey = apiKey('approvals-request', 'approvals:request');
    redeemKey = apiKey('grants-redeem', 'grants:redeem');
    outcomesKey = apiKey('approvals-outcomes', 'outcomes:write');
    for (const who of Object.keys(tokens) as (keyof typeof tokens)[]) {
      tokens[who] = secretFrom(cli('tokens:create', '--email', users[who].email, '--name', 'e2e-approvals'), 'cs_pat_');
    }
  });
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
export let seq = 0;
export const uniq = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${seq++}`;
// The arguments the requests carry, and their digest (written out by hand there).
export const DIGEST = ARGUMENTS_DIGEST;

// billing-mcp is trusted in the demo data: a write that is neither destructive nor open-world needs one approval.
export function approvalBody(over: Record<string, unknown> = {}) {
  return {
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: { name: 'add_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    arguments: ARGUMENTS,
    argsDigest: DIGEST,
    summary: 'Add a note to order 4411',
    resource: { type: 'order', id: '4411' },
    ...over,
  };
}
// orders-mcp is trusted too; a read-only tool there is approved at once.
export const READ_ONLY = { server: 'orders-mcp', tool: { name: 'get_order', annotations: { readOnlyHint: true } } };

export const create = (
  request: APIRequestContext,
  data: unknown,
  idempotencyKey: string | null = uniq('idem'),
  secret = requestKey,
) =>
  request.post('/api/v1/approvals', {
    headers: { ...bearer(secret), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    data,
  });

export const decide = (request: APIRequestContext, id: string, secret: string, data: unknown) =>
  request.post(`/api/v1/approvals/${id}/decisions`, { headers: bearer(secret), data });

export const redeem = (request: APIRequestContext, grantId: string, data: unknown, secret = redeemKey) =>
  request.post(`/api/v1/grants/${grantId}/redeem`, { headers: bearer(secret), data });

export async function pending(
  request: APIRequestContext,
  over: Record<string, unknown> = {},
): Promise<{ id: string; version: number }> {
  const res = await create(request, approvalBody(over));
  expect(res.status()).toBe(201);
  return res.json();
}

export async function autoApproved(
  request: APIRequestContext,
  over: Record<string, unknown> = {},
): Promise<{ id: string; grant: { id: string } }> {
  const res = await create(request, approvalBody({ ...READ_ONLY, ...over }));
  expect(res.status()).toBe(201);
  const body = await res.json();
  expect(body).toMatchObject({ status: 'approved', requiredApprovals: 0, grant: { id: expect.any(String) } });
  return body;
}

export const redeemOf = (over: Record<string, unknown> = {}) => ({
  server: 'orders-mcp',
  tool: 'get_order',
  argsDigest: DIGEST,
  ...over,
});
