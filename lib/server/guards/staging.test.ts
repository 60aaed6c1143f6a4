// The guards asked in the request that stages a write (`guard` on POST /api/v1/approvals;
// docs/api.md "Guards"), against real PostgreSQL through the route: a refusal stages nothing and
// answers 200 with the refusal, stored once with its webhook event; a write let through is staged
// as without the guards, and its Idempotency-Key does not cover the question; a hold is applied
// by the staging; a body refused for its own fields asks nothing; a key that may not write
// outcome records may not ask.
import { describe, expect, it, vi } from 'vitest';
import { db } from '../db/db';
import { ingestOutcomes } from '../outcomes';
import { batchOf, makeKey, makeRecord, value } from '@/testing/outcomes-fixtures';
import { ARGUMENTS, ARGUMENTS_DIGEST, OTHER_ARGUMENTS_DIGEST } from '@/testing/approvals-arguments';
import { uniq } from '@/testing/factories';
import { cli } from '@/lib/auth/actor';
import { createApiKey } from '@/lib/server/credentials/credentials';
import type { Observed, Outcome } from '@/lib/outcomes/schemas';
import { POST } from '@/app/api/v1/approvals/route';

// The route is called with a bearer key; next-auth (cookie sessions) does not load under vitest.
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
const FORBIDDEN: Observed = { sent: true, httpStatus: 403 };

async function keyWith(scopes: string[]) {
  const created = await createApiKey(cli, { name: uniq('key'), scopes: scopes as never });
  if (!created.ok) throw new Error('key');
  return created.value;
}

/** One principal's calls of a write on a server of its own (untrusted: no approval needed by a rule below). */
async function scene() {
  const s = { server: uniq('srv'), principal: uniq('user'), requestRef: uniq('req') };
  // Policy needs no approval for the server: only the guards can stop or hold a write.
  await db.policyRule.create({ data: { server: s.server, toolName: '*', requiredApprovals: 0, createdBy: 'test' } });
  const key = await keyWith(['approvals:request', 'outcomes:write']);
  const record = (observed: Observed, over: Partial<Outcome> = {}): Outcome =>
    makeRecord({ ...s, tool: { name: 'refund_payment' }, argsDigest: ARGUMENTS_DIGEST, observed, ...over });
  const body = (over: Record<string, unknown> = {}) => ({
    requestRef: s.requestRef,
    organization: 'acme',
    principal: s.principal,
    server: s.server,
    tool: { name: 'refund_payment', annotations: { readOnlyHint: false } },
    argsDigest: ARGUMENTS_DIGEST,
    arguments: ARGUMENTS,
    summary: 'Refund 40.00 EUR on order 4411',
    guard: { eventId: uniq('evt') },
    ...over,
  });
  const stage = async (payload: unknown, idempotencyKey = uniq('idem'), token = key.secret) => {
    const res = await POST(
      new Request('http://127.0.0.1/api/v1/approvals', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify(payload),
      }),
      { params: Promise.resolve({}) } as never,
    );
    return { status: res.status, json: await res.json(), replayed: res.headers.get('idempotent-replayed') };
  };
  // The history, posted as an agent posts its records.
  const poster = await makeKey();
  const post = async (...records: Outcome[]) =>
    value(await ingestOutcomes(poster, batchOf(...records))).records.map((r) => r.id);
  const staged = () => db.approvalRequest.count({ where: { server: s.server } });
  return { ...s, key, record, body, stage, post, staged };
}

const refusedEvents = (requestRef: string) =>
  db.webhookEvent.count({ where: { type: 'call.refused', data: { path: ['requestRef'], equals: requestRef } } });

describe('the guards asked with the staging (real PostgreSQL)', () => {
  it('an unknown write: 200 with the refusal, nothing staged, the refusal stored once with call.refused', async () => {
    const s = await scene();
    const [unknown] = await s.post(s.record(TIMEOUT));
    const eventId = uniq('evt');
    const first = await s.stage(s.body({ guard: { eventId } }));
    expect(first.status).toBe(200);
    expect(first.json.guard).toMatchObject({
      decision: 'refuse',
      category: 'outcome_unknown',
      retry: 'after_state_check',
      recordId: unknown,
      record: { eventId },
    });
    expect(await s.staged()).toBe(0);
    // Asked again (a retry of the same call's staging): the same refusal, stored once.
    const again = await s.stage(s.body({ guard: { eventId } }));
    expect(again.json.guard.record).toEqual(first.json.guard.record);
    expect(await db.outcomeRecord.count({ where: { eventId } })).toBe(1);
    expect(await refusedEvents(s.requestRef)).toBe(1);
  });

  it("the records sent along are read: a write's own unknown of a moment ago refuses its repeat", async () => {
    const s = await scene();
    const unposted = s.record(TIMEOUT);
    const r = await s.stage(s.body({ guard: { eventId: uniq('evt'), records: [unposted] } }));
    expect(r.json.guard).toMatchObject({ category: 'outcome_unknown' });
    expect(await db.outcomeRecord.count({ where: { eventId: unposted.eventId } })).toBe(1);
  });

  it("a write let through is staged; the Idempotency-Key covers the request, not the guards' question", async () => {
    const s = await scene();
    const key = uniq('idem');
    const first = await s.stage(s.body(), key);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ status: 'approved', requiredApprovals: 0 });
    // The same staging retried with another question (new records to send along): the same answer.
    const other = s.record({ sent: true, httpStatus: 200 }, { tool: { name: 'get_order' } });
    const again = await s.stage(s.body({ guard: { eventId: uniq('evt'), records: [other] } }), key);
    expect(again).toMatchObject({ status: 201, replayed: 'true', json: { id: first.json.id } });
    expect(await s.staged()).toBe(1);
  });

  it('a write after a permission refusal in the request is staged, held for one approval, naming it', async () => {
    const s = await scene();
    const [forbidden] = await s.post(
      s.record(FORBIDDEN, { tool: { name: 'list_refunds' }, argsDigest: OTHER_ARGUMENTS_DIGEST }),
    );
    const r = await s.stage(s.body());
    expect(r).toMatchObject({ status: 201, json: { status: 'pending', requiredApprovals: 1 } });
    const audit = await db.auditEntry.findFirstOrThrow({ where: { action: 'approval.request', targetId: r.json.id } });
    expect(audit.data).toMatchObject({ heldFor: forbidden });
  });

  it('bad input: the body refused for its own fields asks nothing; the guard fields are named under guard', async () => {
    const s = await scene();
    await s.post(s.record(TIMEOUT));
    // Arguments that are not the digest's: 422, and no refusal stored although the guards would refuse.
    const eventId = uniq('evt');
    const mismatch = await s.stage(s.body({ argsDigest: OTHER_ARGUMENTS_DIGEST, guard: { eventId } }));
    expect(mismatch.status).toBe(422);
    expect(mismatch.json.errors.map((e: { path: string }) => e.path)).toEqual(['arguments']);
    expect(await db.outcomeRecord.count({ where: { eventId } })).toBe(0);
    // The question's own fields.
    const paths = async (guard: unknown) =>
      (await s.stage(s.body({ guard }))).json.errors.map((e: { path: string }) => e.path);
    expect(await paths({ eventId: '' })).toEqual(['guard.eventId']);
    expect(await paths({ eventId: 'e', idempotencyKey: 'k'.repeat(10 * 1024) })).toEqual(['guard.idempotencyKey']);
    expect(await paths({ eventId: 'e', records: Array.from({ length: 101 }, () => s.record(TIMEOUT)) })).toEqual([
      'guard.records',
    ]);
    expect(await paths({ eventId: 'e', decision: 'allow' })).toEqual(['guard.decision']);
    // A record of another organization, from a key limited to acme.
    const limited = await createApiKey(cli, {
      name: uniq('key'),
      scopes: ['approvals:request', 'outcomes:write'],
      organization: 'acme',
    });
    if (!limited.ok) throw new Error('key');
    const foreign = await s.stage(
      s.body({ guard: { eventId: uniq('evt'), records: [s.record(TIMEOUT, { organization: 'globex' })] } }),
      uniq('idem'),
      limited.value.secret,
    );
    expect(foreign.status).toBe(403);
    expect(foreign.json.errors.map((e: { path: string }) => e.path)).toEqual(['guard.records.0.organization']);
    expect(await s.staged()).toBe(0);
  });

  it('a key that may stage but not write outcome records may not ask the guards: 403 naming guard', async () => {
    const s = await scene();
    const stager = await keyWith(['approvals:request']);
    const r = await s.stage(s.body(), uniq('idem'), stager.secret);
    expect(r.status).toBe(403);
    expect(r.json.errors.map((e: { path: string }) => e.path)).toEqual(['guard']);
    expect(await s.staged()).toBe(0);
    // Without the question, it stages as before.
    expect((await s.stage(s.body({ guard: undefined }), uniq('idem'), stager.secret)).status).toBe(201);
  });

  it('concurrent stagings of one refused call under one eventId: one refusal stored, each answered with it', async () => {
    const s = await scene();
    await s.post(s.record(TIMEOUT));
    const eventId = uniq('evt');
    const answers = await Promise.all(Array.from({ length: 6 }, () => s.stage(s.body({ guard: { eventId } }))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.json.guard.record.id)).size).toBe(1);
    expect(await db.outcomeRecord.count({ where: { eventId } })).toBe(1);
    expect(await s.staged()).toBe(0);
  });
});
