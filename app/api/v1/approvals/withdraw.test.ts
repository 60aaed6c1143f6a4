import { beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { cli } from '@/lib/auth/actor';
import { apiScopes } from '@/lib/credentials/scopes';
import { listAuditEntries } from '@/lib/server/audit/audit';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { api, call, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import { makeActors, newApproval, type Actors } from '@/testing/api-bodies';
import { contractViolation } from '@/testing/api-contract-check';
import { uniq } from '@/testing/factories';

vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

// POST /api/v1/approvals/{id}/withdraw through its route handler (docs/api.md "Approvals and
// grants"): the API key that staged a request withdraws it while it is pending; nobody else can,
// and another key's request does not even exist for it. Expected codes from docs/api.md.

let actors: Actors;
let otherKey: string;
beforeAll(async () => {
  actors = await makeActors();
  const other = await createApiKey(cli, { name: uniq('other-key'), scopes: [...apiScopes] });
  if (!other.ok) throw new Error('other key');
  otherKey = other.value.secret;
});

const post = (token: string, id: string, body: unknown) => call(api.withdraw, { token, params: { id }, body });
const reason = 'the client declined the elicitation';
const documented = (r: Reply) =>
  expect(
    contractViolation(
      'POST',
      `http://127.0.0.1/api/v1/approvals/${randomUUID()}/withdraw`,
      r.status,
      r.headers.get('content-type') ?? '',
      r.text,
    ),
  ).toBeNull();

async function pendingRequest(): Promise<string> {
  const { id, grantId } = await newApproval(actors);
  expect(grantId).toBeNull();
  return id;
}

describe('POST /api/v1/approvals/{id}/withdraw', () => {
  it('the staging key withdraws its pending request: 200 revoked, the key named, the arguments erased, audited', async () => {
    const id = await pendingRequest();
    const r = await post(actors.key, id, { reason });
    expectOk(r, [200]);
    documented(r);
    expect(r.json.status).toBe('revoked');
    expect(r.json.revoked).toMatchObject({ by: expect.stringMatching(/^api_key:[0-9a-f-]{36}$/), reason });
    const read = await call(api.getApproval, { token: actors.reviewer, params: { id } });
    expectOk(read, [200]);
    expect(read.json.status).toBe('revoked');
    expect(read.json.arguments ?? null).toBeNull();
    const audit = await listAuditEntries(cli, undefined, 500);
    if (!audit.ok) throw new Error('audit');
    const entry = audit.value.items.find((e) => e.targetId === id && e.action === 'approval.withdraw');
    expect(entry).toMatchObject({ actor: r.json.revoked.by, targetType: 'approval' });
  });

  it('two withdrawals at once: exactly one 200, the other 409 naming what became of it', async () => {
    const id = await pendingRequest();
    const both = await Promise.all([post(actors.key, id, { reason }), post(actors.key, id, { reason })]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    const lost = both.find((r) => r.status === 409)!;
    expectProblem(lost, [409]);
    documented(lost);
    const again = await post(actors.key, id, { reason });
    expectProblem(again, [409]);
  });

  it("another key's request: 404, as if it did not exist, and it stays pending", async () => {
    const id = await pendingRequest();
    const r = await post(otherKey, id, { reason });
    expectProblem(r, [404]);
    documented(r);
    const read = await call(api.getApproval, { token: actors.reviewer, params: { id } });
    expect(read.json.status).toBe('pending');
  });

  it('an unknown id or one that is no id at all: 404', async () => {
    expectProblem(await post(actors.key, randomUUID(), { reason }), [404]);
    expectProblem(await post(actors.key, 'not-a-uuid', { reason }), [404]);
  });

  it('a person (even an admin) cannot withdraw: 403', async () => {
    const id = await pendingRequest();
    expectProblem(await post(actors.admin, id, { reason }), [403]);
  });

  it.each([
    ['no reason', {}, 'reason'],
    ['an empty reason', { reason: '  ' }, 'reason'],
    ['a reason that is no string', { reason: 7 }, 'reason'],
  ])('%s: 422 naming the field, nothing withdrawn', async (_name, body, field) => {
    const id = await pendingRequest();
    const r = await post(actors.key, id, body);
    expectProblem(r, [422], field);
    const read = await call(api.getApproval, { token: actors.reviewer, params: { id } });
    expect(read.json.status).toBe('pending');
  });
});
