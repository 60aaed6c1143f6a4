import { expect, test, type APIRequestContext } from '@playwright/test';
import { cli, expectProblem, secretFrom, users } from '../testing/e2e';

// Approvals and grants through the real server (API.md, "Approvals and grants"): every status
// code the contract names for these routes.

let requestKey = '';
let redeemKey = '';
let outcomesKey = '';
const tokens = { reviewer: '', reviewer2: '', admin: '', support: '' };

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

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
let seq = 0;
const uniq = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${seq++}`;
const DIGEST = `sha256:${'cd'.repeat(32)}`;

// billing-mcp is trusted in the demo data: a write that is neither destructive nor open-world needs one approval.
function approvalBody(over: Record<string, unknown> = {}) {
  return {
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: { name: 'add_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
    argsDigest: DIGEST,
    summary: 'Add a note to order 4411',
    resource: { type: 'order', id: '4411' },
    ...over,
  };
}
// orders-mcp is trusted too; a read-only tool there is approved at once.
const READ_ONLY = { server: 'orders-mcp', tool: { name: 'get_order', annotations: { readOnlyHint: true } } };

const create = (
  request: APIRequestContext,
  data: unknown,
  idempotencyKey: string | null = uniq('idem'),
  secret = requestKey,
) =>
  request.post('/api/v1/approvals', {
    headers: { ...bearer(secret), ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    data,
  });

const decide = (request: APIRequestContext, id: string, secret: string, data: unknown) =>
  request.post(`/api/v1/approvals/${id}/decisions`, { headers: bearer(secret), data });

const redeem = (request: APIRequestContext, grantId: string, data: unknown, secret = redeemKey) =>
  request.post(`/api/v1/grants/${grantId}/redeem`, { headers: bearer(secret), data });

async function pending(
  request: APIRequestContext,
  over: Record<string, unknown> = {},
): Promise<{ id: string; version: number }> {
  const res = await create(request, approvalBody(over));
  expect(res.status()).toBe(201);
  return res.json();
}

async function autoApproved(
  request: APIRequestContext,
  over: Record<string, unknown> = {},
): Promise<{ id: string; grant: { id: string } }> {
  const res = await create(request, approvalBody({ ...READ_ONLY, ...over }));
  expect(res.status()).toBe(201);
  const body = await res.json();
  expect(body).toMatchObject({ status: 'approved', requiredApprovals: 0, grant: { id: expect.any(String) } });
  return body;
}

const redeemOf = (over: Record<string, unknown> = {}) => ({
  server: 'orders-mcp',
  tool: 'get_order',
  argsDigest: DIGEST,
  ...over,
});

test.describe('POST /api/v1/approvals', () => {
  test('201 with { id, status, requiredApprovals, expiresAt, version }; the same key and body replay it', async ({
    request,
  }) => {
    const key = uniq('idem');
    const body = approvalBody();
    const res = await create(request, body, key);
    expect(res.status()).toBe(201);
    const created = await res.json();
    expect(created).toMatchObject({
      id: expect.any(String),
      status: 'pending',
      requiredApprovals: 1,
      version: 1,
      grant: null,
    });
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(3500_000);

    const replay = await create(request, body, key);
    expect(replay.status()).toBe(201);
    expect(replay.headers()['idempotent-replayed']).toBe('true');
    expect(await replay.json()).toEqual(created);
  });

  test('400 without an Idempotency-Key; 422 when the key is reused for another body', async ({ request }) => {
    await expectProblem(await create(request, approvalBody(), null), 400, 'idempotency_key_required');
    const key = uniq('idem');
    expect((await create(request, approvalBody(), key)).status()).toBe(201);
    await expectProblem(
      await create(request, approvalBody({ argsDigest: `sha256:${'ef'.repeat(32)}` }), key),
      422,
      'idempotency_key_reused',
    );
  });

  test('401 without a credential; 403 without the scope (a key or a person)', async ({ request }) => {
    await expectProblem(
      await request.post('/api/v1/approvals', { headers: { 'idempotency-key': uniq('idem') }, data: approvalBody() }),
      401,
      'unauthenticated',
    );
    await expectProblem(await create(request, approvalBody(), uniq('idem'), outcomesKey), 403, 'forbidden');
    await expectProblem(await create(request, approvalBody(), uniq('idem'), tokens.admin), 403, 'forbidden');
  });

  test('400 for malformed JSON; 422 naming each invalid field', async ({ request }) => {
    const malformed = await request.post('/api/v1/approvals', {
      headers: { ...bearer(requestKey), 'idempotency-key': uniq('idem'), 'content-type': 'application/json' },
      data: Buffer.from('{"requestRef":'),
    });
    await expectProblem(malformed, 400, 'invalid_input');
    const body = await expectProblem(
      await create(request, approvalBody({ argsDigest: 'md5:abc', grantTtlSeconds: 86_401, principal: '' })),
      422,
      'invalid_input',
    );
    expect(body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'argsDigest',
      'grantTtlSeconds',
      'principal',
    ]);
  });
});

test.describe('GET /api/v1/approvals/{id}', () => {
  test('200 with the API.md shape for keys and people; 404 for unknown or malformed ids; 401 without a credential', async ({
    request,
  }) => {
    const { id } = await pending(request);
    for (const secret of [requestKey, redeemKey, tokens.support]) {
      const res = await request.get(`/api/v1/approvals/${id}`, { headers: bearer(secret) });
      expect(res.status()).toBe(200);
      const view = await res.json();
      expect(view).toMatchObject({
        id,
        status: 'pending',
        requiredApprovals: 1,
        decisions: [],
        version: 1,
        expiresAt: expect.any(String),
        grant: null,
      });
      expect(JSON.stringify(view)).not.toMatch(/requestHash|request_hash|requestedByKeyId/);
    }
    await expectProblem(
      await request.get('/api/v1/approvals/00000000-0000-4000-8000-000000000000', { headers: bearer(redeemKey) }),
      404,
      'not_found',
    );
    await expectProblem(await request.get('/api/v1/approvals/nope', { headers: bearer(redeemKey) }), 404, 'not_found');
    await expectProblem(await request.get(`/api/v1/approvals/${id}`), 401, 'unauthenticated');
    await expectProblem(
      await request.get(`/api/v1/approvals/${id}`, { headers: bearer(outcomesKey) }),
      403,
      'forbidden',
    );
  });

  test('the list: pending queue for people, filtered', async ({ request }) => {
    const principal = uniq('user');
    const { id } = await pending(request, { principal });
    const res = await request.get(`/api/v1/approvals?status=pending&principal=${principal}`, {
      headers: bearer(tokens.reviewer),
    });
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({ items: [{ id, status: 'pending' }], nextCursor: null });
    await expectProblem(
      await request.get('/api/v1/approvals?status=maybe', { headers: bearer(tokens.reviewer) }),
      422,
      'invalid_input',
    );
  });
});

test.describe('POST /api/v1/approvals/{id}/decisions', () => {
  test('200 with the new state and the grant once approved; 409 naming who decided, and when', async ({ request }) => {
    const { id } = await pending(request);
    const res = await decide(request, id, tokens.reviewer, {
      decision: 'approve',
      reason: 'Checked the order',
      version: 1,
    });
    expect(res.status()).toBe(200);
    const view = await res.json();
    expect(view).toMatchObject({
      id,
      status: 'approved',
      version: 2,
      decisions: [
        { reviewer: users.reviewer.email, decision: 'approve', reason: 'Checked the order', at: expect.any(String) },
      ],
      grant: { id: expect.any(String), expiresAt: expect.any(String), redeemedAt: null, revokedAt: null },
    });
    const late = await expectProblem(
      await decide(request, id, tokens.reviewer2, { decision: 'deny', reason: 'Too late?', version: 1 }),
      409,
      'conflict',
    );
    expect(late.detail).toContain(`approved by ${users.reviewer.email} at ${view.decisions[0].at}`);
  });

  test('a stale version on a two-approval request: 409 naming the earlier decision', async ({ request }) => {
    const { id } = await pending(request, {
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      },
    });
    expect(
      (await decide(request, id, tokens.reviewer, { decision: 'approve', reason: 'ok', version: 1 })).status(),
    ).toBe(200);
    const stale = await expectProblem(
      await decide(request, id, tokens.reviewer2, { decision: 'approve', reason: 'ok', version: 1 }),
      409,
      'conflict',
    );
    expect(stale.detail).toContain(users.reviewer.email);
    await expectProblem(
      await decide(request, id, tokens.reviewer, { decision: 'approve', reason: 'again', version: 2 }),
      409,
      'conflict',
    );
    const done = await decide(request, id, tokens.reviewer2, { decision: 'approve', reason: 'ok', version: 2 });
    expect(done.status()).toBe(200);
    expect(await done.json()).toMatchObject({
      status: 'approved',
      decisions: [{}, {}],
      grant: { id: expect.any(String) },
    });
  });

  test("403 when the reviewer is the request's principal, for a role that may not decide, and for API keys", async ({
    request,
  }) => {
    const { id } = await pending(request, { principal: users.reviewer.principalId });
    const self = await expectProblem(
      await decide(request, id, tokens.reviewer, { decision: 'approve', reason: 'mine', version: 1 }),
      403,
      'forbidden',
    );
    expect(self.detail).toMatch(/own behalf/);
    await expectProblem(
      await decide(request, id, tokens.support, { decision: 'approve', reason: 'x', version: 1 }),
      403,
      'forbidden',
    );
    await expectProblem(
      await decide(request, id, requestKey, { decision: 'approve', reason: 'x', version: 1 }),
      403,
      'forbidden',
    );
    // Another reviewer may.
    expect(
      (
        await decide(request, id, tokens.reviewer2, { decision: 'deny', reason: 'Not on their own say-so', version: 1 })
      ).status(),
    ).toBe(200);
  });

  test('401, 404, 422', async ({ request }) => {
    const { id } = await pending(request);
    await expectProblem(
      await request.post(`/api/v1/approvals/${id}/decisions`, {
        data: { decision: 'approve', reason: 'x', version: 1 },
      }),
      401,
      'unauthenticated',
    );
    await expectProblem(
      await decide(request, '00000000-0000-4000-8000-000000000000', tokens.reviewer, {
        decision: 'approve',
        reason: 'x',
        version: 1,
      }),
      404,
      'not_found',
    );
    const invalid = await expectProblem(
      await decide(request, id, tokens.reviewer, { decision: 'maybe', reason: '', version: 1 }),
      422,
      'invalid_input',
    );
    expect(invalid.errors.map((e: { path: string }) => e.path)).toEqual(['decision', 'reason']);
  });
});

test.describe('POST /api/v1/approvals/{id}/revoke', () => {
  test('200 for an admin on a pending request; 409 afterwards; 403 for a reviewer; 404 unknown', async ({
    request,
  }) => {
    const { id } = await pending(request);
    await expectProblem(
      await request.post(`/api/v1/approvals/${id}/revoke`, {
        headers: bearer(tokens.reviewer),
        data: { reason: 'no' },
      }),
      403,
      'forbidden',
    );
    const res = await request.post(`/api/v1/approvals/${id}/revoke`, {
      headers: bearer(tokens.admin),
      data: { reason: 'Customer withdrew' },
    });
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({
      id,
      status: 'revoked',
      revoked: { by: users.admin.email, reason: 'Customer withdrew' },
    });
    await expectProblem(
      await request.post(`/api/v1/approvals/${id}/revoke`, {
        headers: bearer(tokens.admin),
        data: { reason: 'again' },
      }),
      409,
      'conflict',
    );
    await expectProblem(
      await request.post('/api/v1/approvals/00000000-0000-4000-8000-000000000000/revoke', {
        headers: bearer(tokens.admin),
        data: { reason: 'x' },
      }),
      404,
      'not_found',
    );
  });
});

test.describe('POST /api/v1/grants/{grantId}/redeem', () => {
  test('200 exactly once; 409 after', async ({ request }) => {
    const { id, grant } = await autoApproved(request);
    const res = await redeem(request, grant.id, redeemOf());
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({
      grantId: grant.id,
      approvalId: id,
      redeemedAt: expect.any(String),
      server: 'orders-mcp',
      tool: 'get_order',
      argsDigest: DIGEST,
    });
    await expectProblem(await redeem(request, grant.id, redeemOf()), 409, 'conflict');
    const view = await (await request.get(`/api/v1/approvals/${id}`, { headers: bearer(redeemKey) })).json();
    expect(view).toMatchObject({ status: 'redeemed', grant: { id: grant.id, redeemedAt: expect.any(String) } });
  });

  test('422 naming the field that differs from what was approved', async ({ request }) => {
    const { grant } = await autoApproved(request);
    const body = await expectProblem(
      await redeem(request, grant.id, redeemOf({ argsDigest: `sha256:${'00'.repeat(32)}` })),
      422,
      'invalid_input',
    );
    expect(body.errors).toEqual([{ path: 'argsDigest', message: expect.any(String) }]);
    const tool = await expectProblem(
      await redeem(request, grant.id, redeemOf({ tool: 'delete_order' })),
      422,
      'invalid_input',
    );
    expect(tool.errors.map((e: { path: string }) => e.path)).toEqual(['tool']);
  });

  test('410 once revoked, and once expired by the database clock', async ({ request }) => {
    const revoked = await autoApproved(request);
    expect(
      (
        await request.post(`/api/v1/approvals/${revoked.id}/revoke`, {
          headers: bearer(tokens.admin),
          data: { reason: 'Wrong order' },
        })
      ).status(),
    ).toBe(200);
    const gone = await expectProblem(await redeem(request, revoked.grant.id, redeemOf()), 410, 'gone');
    expect(gone.detail).toContain(users.admin.email);
    // Revoking what is already revoked, or redeemed, is a conflict.
    await expectProblem(
      await request.post(`/api/v1/approvals/${revoked.id}/revoke`, {
        headers: bearer(tokens.admin),
        data: { reason: 'again' },
      }),
      409,
      'conflict',
    );

    const expiring = await autoApproved(request, { grantTtlSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1300));
    await expectProblem(await redeem(request, expiring.grant.id, redeemOf()), 410, 'gone');
  });

  test('401, 403 without grants:redeem, 404 for an unknown grant', async ({ request }) => {
    const { grant } = await autoApproved(request);
    await expectProblem(
      await request.post(`/api/v1/grants/${grant.id}/redeem`, { data: redeemOf() }),
      401,
      'unauthenticated',
    );
    await expectProblem(await redeem(request, grant.id, redeemOf(), requestKey), 403, 'forbidden');
    await expectProblem(await redeem(request, grant.id, redeemOf(), tokens.admin), 403, 'forbidden');
    await expectProblem(await redeem(request, '00000000-0000-4000-8000-000000000000', redeemOf()), 404, 'not_found');
    await expectProblem(await redeem(request, 'grt_nope', redeemOf()), 404, 'not_found');
  });
});
