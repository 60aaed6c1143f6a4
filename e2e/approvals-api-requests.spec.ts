// Approvals through the real server (docs/api.md, "Approvals and grants"): every status code the
// contract names for requesting, reading and listing approvals.
import { expect, test } from '../testing/api-contract';
import { expectProblem } from '../testing/e2e';
import {
  requestKey,
  redeemKey,
  outcomesKey,
  tokens,
  setUpApprovalsApi,
  bearer,
  uniq,
  approvalBody,
  create,
  pending,
} from '../testing/approvals-api';
import { OTHER_ARGUMENTS, OTHER_ARGUMENTS_DIGEST } from '../testing/approvals-arguments';

setUpApprovalsApi();

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
      await create(request, approvalBody({ arguments: OTHER_ARGUMENTS, argsDigest: OTHER_ARGUMENTS_DIGEST }), key),
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
  test('200 with the docs/api.md shape for keys and people; 404 for unknown or malformed ids; 401 without a credential', async ({
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
