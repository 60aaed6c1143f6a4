// Approvals through the real server (docs/api.md, "Approvals and grants"): every status code the
// contract names for deciding and revoking.
import { expect, test } from '../testing/api-contract';
import { expectProblem, users } from '../testing/e2e';
import { requestKey, tokens, setUpApprovalsApi, bearer, decide, pending } from '../testing/approvals-api';

setUpApprovalsApi();

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
