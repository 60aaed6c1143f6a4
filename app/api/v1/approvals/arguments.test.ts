import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createPersonalToken } from '@/lib/server/credentials/credentials';
import { cli } from '@/lib/auth/actor';
import { api, call, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import { approvalBody, makeActors, type Actors } from '@/testing/api-bodies';
import { contractViolation } from '@/testing/api-contract-check';
import { makeUser, uniq } from '@/testing/factories';
import { ARGUMENTS, digestOfCanonical } from '@/testing/approvals-arguments';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

// POST /api/v1/approvals with arguments and GET /api/v1/approvals/{id} through the route handlers
// (docs/api.md "Approvals and grants"): the codes on the wire, and each answer as documented.
let actors: Actors;
let supportToken: string;
beforeAll(async () => {
  actors = await makeActors();
  const support = await makeUser('support');
  const token = await createPersonalToken(cli, support.userId, 'args');
  if (!token.ok) throw new Error('support token');
  supportToken = token.value.secret;
});

const post = (body: unknown, key = uniq('idem')) =>
  call(api.postApproval, { token: actors.key, body, headers: { 'idempotency-key': key } });
const get = (token: string, id: string) => call(api.getApproval, { token, params: { id } });
const documented = (method: string, path: string, r: Reply) =>
  expect(
    contractViolation(method, `http://127.0.0.1${path}`, r.status, r.headers.get('content-type') ?? '', r.text),
  ).toBeNull();

describe('POST /api/v1/approvals with arguments', () => {
  it('a 1 MB string, under the 1 MiB body limit: 422 arguments_too_large naming arguments, not 413', async () => {
    const blob = 'x'.repeat(1_000_000);
    const r = await post(approvalBody({ arguments: { blob } }));
    expectProblem(r, [422], 'arguments');
    expect(r.json.code).toBe('arguments_too_large');
    documented('POST', '/api/v1/approvals', r);
  });

  it.each([
    ['arguments_required', { arguments: undefined }],
    ['arguments_digest_mismatch', { arguments: { ...ARGUMENTS, amount: '4000.00' } }],
    ['invalid_input', { arguments: ['4411'] }],
  ])('%s, naming arguments, as documented', async (code, over) => {
    const r = await post(approvalBody(over));
    expectProblem(r, [422], 'arguments');
    expect(r.json.code).toBe(code);
    documented('POST', '/api/v1/approvals', r);
  });

  it('nested 100,000 levels deep: 422, not a crash', async () => {
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const body = JSON.stringify(approvalBody()).replace(/"arguments":\{[^}]*\}/, `"arguments":${deep}`);
    const r = await post(body);
    expectProblem(r, [400, 422]);
  });
});

describe('GET /api/v1/approvals/{id}', () => {
  it('answers arguments to a reviewer; null and "reviewers only" to support staff and API keys', async () => {
    const created = await post(approvalBody());
    expectOk(created, [201]);
    const path = `/api/v1/approvals/${created.json.id}`;
    const asReviewer = await get(actors.reviewer, created.json.id);
    expectOk(asReviewer, [200]);
    expect(asReviewer.json).toMatchObject({ arguments: ARGUMENTS, argumentsNote: null, argumentsSent: true });
    documented('GET', path, asReviewer);
    for (const token of [supportToken, actors.key]) {
      const r = await get(token, created.json.id);
      expect(r.json).toMatchObject({ arguments: null, argumentsNote: 'reviewers only', argumentsPreview: null });
      documented('GET', path, r);
    }
  });

  it('after a denial: null, saying when they were erased', async () => {
    const created = await post(approvalBody());
    const denied = await call(api.decide, {
      token: actors.reviewer,
      params: { id: created.json.id },
      body: { decision: 'deny', reason: 'not this order', version: 1 },
    });
    expectOk(denied, [200]);
    expect(denied.json).toMatchObject({
      status: 'denied',
      arguments: null,
      argumentsNote: `erased when denied at ${denied.json.decidedAt}`,
    });
    documented('POST', `/api/v1/approvals/${created.json.id}/decisions`, denied);
  });

  it('lists previews, never the arguments', async () => {
    const args = { order_id: '77', amount: '5.00' };
    const created = await post(
      approvalBody({ arguments: args, argsDigest: digestOfCanonical('{"amount":"5.00","order_id":"77"}') }),
    );
    expectOk(created, [201]);
    const r = await call(api.listApprovals, { token: actors.reviewer, query: { status: 'pending', limit: '200' } });
    documented('GET', '/api/v1/approvals', r);
    const item = r.json.items.find((i: { id: string }) => i.id === created.json.id);
    expect(item).toMatchObject({
      arguments: null,
      argumentsPreview: [
        { key: 'order_id', value: '77', type: 'string' },
        { key: 'amount', value: '5.00', type: 'string' },
      ],
    });
  });
});
