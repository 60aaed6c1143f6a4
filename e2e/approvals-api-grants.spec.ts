// Grants through the real server (docs/api.md, "Approvals and grants"): every status code the contract
// names for redeeming a grant.
import { expect, test } from '../testing/api-contract';
import { expectProblem, users } from '../testing/e2e';
import {
  requestKey,
  redeemKey,
  tokens,
  setUpApprovalsApi,
  bearer,
  DIGEST,
  redeem,
  autoApproved,
  redeemOf,
} from '../testing/approvals-api';

setUpApprovalsApi();

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
