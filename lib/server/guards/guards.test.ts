// The guards end to end against real PostgreSQL (docs/design.md "Guards at the point of execution";
// docs/api.md "Guards"): history posted through ingest, each row of the table decided by the console,
// refusals stored with their webhook event, replays, keys limited to an organization, bad input,
// races and the console's clock.
import { describe, expect, it, vi } from 'vitest';
import { checkGuard } from '.';
import { db } from '../db/db';
import { ingestOutcomes, recordStateCheck } from '../outcomes';
import { makeUser, uniq } from '@/testing/factories';
import { batchOf, makeKey, makeRecord, OK, value } from '@/testing/outcomes-fixtures';
import type { ApiKeyActor } from '@/lib/auth/actor';
import { guardCheckSchema } from '@/lib/guards/schemas';
import type { Observed, Outcome } from '@/lib/outcomes/schemas';
import { fieldErrors } from '@/lib/result';
import { cli } from '@/lib/auth/actor';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { POST } from '@/app/api/v1/guards/check/route';

// The route is called with a bearer key; next-auth (cookie sessions) does not load under vitest.
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

const D = (c: string) => `sha256:${c.repeat(64)}`;
const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
const UNAVAILABLE: Observed = { sent: true, httpStatus: 503 };
const VALIDATION: Observed = { sent: true, httpStatus: 200, result: { isError: true, errorCategory: 'validation' } };
const FORBIDDEN: Observed = { sent: true, httpStatus: 403 };

/** One principal's calls on a server of its own, in one request reference. */
function scene(trusted = false) {
  const s = { server: uniq('srv'), principal: uniq('user'), requestRef: uniq('req') };
  const record = (observed: Observed, over: Partial<Outcome> = {}): Outcome =>
    makeRecord({ ...s, argsDigest: D('a'), observed, ...over });
  const body = (over: Record<string, unknown> = {}) => ({
    eventId: uniq('guard'),
    requestRef: s.requestRef,
    organization: 'acme',
    principal: s.principal,
    server: s.server,
    tool: { name: 'refund_payment', annotations: { readOnlyHint: trusted } },
    argsDigest: D('a'),
    ...over,
  });
  const check = (key: ApiKeyActor, over: Record<string, unknown> = {}) =>
    checkGuard(key, guardCheckSchema.parse(body(over)));
  const trust = () => db.trustedServer.create({ data: { name: s.server, trustedBy: 'test' } });
  return { ...s, trusted, record, body, check, trust };
}

async function post(key: ApiKeyActor, ...records: Outcome[]): Promise<string[]> {
  return value(await ingestOutcomes(key, batchOf(...records))).records.map((r) => r.id);
}

/** Moves the receipt of a scene's records back, as if they had arrived `ms` earlier. */
const receivedEarlier = (server: string, ms: number) =>
  db.$executeRaw`UPDATE outcome_records SET received_at = received_at - make_interval(secs => ${ms / 1000}::float8) WHERE server = ${server}`;

const refusedEvents = (requestRef: string) =>
  db.webhookEvent.findMany({ where: { type: 'call.refused', data: { path: ['requestRef'], equals: requestRef } } });

describe('checkGuard (real PostgreSQL)', () => {
  it('row 1: an unknown write refuses the same call, stores the refusal and sends call.refused', async () => {
    const key = await makeKey();
    const s = scene();
    const [unknown] = await post(key, s.record(TIMEOUT, { idempotencyKey: 'k1' }));
    const answer = value(await s.check(key, { eventId: 'guard-1-' + s.server }));
    expect(answer).toMatchObject({ decision: 'refuse', category: 'outcome_unknown', retry: 'after_state_check' });
    if (answer.decision !== 'refuse') throw new Error('refused');
    expect(answer.recordId).toBe(unknown);
    expect(answer.text).toMatch(/^The call to refund_payment was not sent: .*check its state first/);
    const stored = await db.outcomeRecord.findFirstOrThrow({ where: { id: answer.record.id } });
    expect(stored).toMatchObject({
      eventId: 'guard-1-' + s.server,
      delivery: 'never_sent',
      category: 'outcome_unknown',
      retry: 'after_state_check',
      earlierRecordId: unknown,
      observed: { sent: false, clientBlock: 'outcome_unknown' },
    });
    const events = await refusedEvents(s.requestRef);
    expect(events.map((e) => e.data)).toEqual([
      {
        category: 'outcome_unknown',
        server: s.server,
        tool: 'refund_payment',
        requestRef: s.requestRef,
        recordId: answer.record.id,
      },
    ]);
    // Its own key replays it (once the backoff passed); another key does not.
    await receivedEarlier(s.server, 2000);
    expect(value(await s.check(key, { idempotencyKey: 'k1' }))).toEqual({ decision: 'allow' });
    expect(value(await s.check(key, { idempotencyKey: 'k2' }))).toMatchObject({ category: 'outcome_unknown' });
  });

  it('a state check releases it: did_not_happen allows, happened is already_done', async () => {
    const key = await makeKey();
    const support = await makeUser('support');
    const s = scene();
    const [first] = await post(key, s.record(TIMEOUT));
    const [second] = await post(key, s.record(TIMEOUT, { argsDigest: D('b') }));
    await receivedEarlier(s.server, 5000);
    const note = 'Checked the provider.';
    value(await recordStateCheck(support, first, { verdict: 'did_not_happen', note }));
    value(await recordStateCheck(support, second, { verdict: 'happened', note }));
    expect(value(await s.check(key))).toEqual({ decision: 'allow' });
    expect(value(await s.check(key, { argsDigest: D('b') }))).toMatchObject({
      decision: 'refuse',
      category: 'already_done',
      retry: 'no',
      recordId: second,
    });
  });

  it('row 2: a write completed ok in this request is already done; in another request it is allowed', async () => {
    const key = await makeKey();
    const s = scene();
    const [done] = await post(key, s.record(OK));
    expect(value(await s.check(key))).toMatchObject({ category: 'already_done', recordId: done });
    expect(value(await s.check(key, { requestRef: uniq('req') }))).toEqual({ decision: 'allow' });
  });

  it('row 3: an idempotency key used with other arguments', async () => {
    const key = await makeKey();
    const s = scene();
    const [earlier] = await post(key, s.record(OK, { idempotencyKey: 'k1', requestRef: uniq('req') }));
    expect(value(await s.check(key, { idempotencyKey: 'k1', argsDigest: D('b') }))).toMatchObject({
      category: 'idempotency_key_reused',
      retry: 'after_correction',
      recordId: earlier,
    });
  });

  it("row 4: the same call after a refusal that cannot change carries that refusal's retry", async () => {
    const key = await makeKey();
    const s = scene();
    const [refused] = await post(key, s.record(VALIDATION));
    expect(value(await s.check(key))).toMatchObject({
      category: 'not_retryable',
      retry: 'after_correction',
      recordId: refused,
    });
    expect(value(await s.check(key, { argsDigest: D('b') }))).toEqual({ decision: 'allow' });
  });

  it('row 5: a retry sooner than the backoff, by the receipt time of the failure', async () => {
    const key = await makeKey();
    const s = scene(true);
    await s.trust();
    const [failure] = await post(key, s.record(UNAVAILABLE));
    const soon = value(await s.check(key));
    expect(soon).toMatchObject({ category: 'retry_too_soon', retry: 'backoff', recordId: failure });
    if (soon.decision !== 'refuse') throw new Error('refused');
    expect(soon.retryAfterMs).toBeGreaterThan(0);
    expect(soon.retryAfterMs).toBeLessThanOrEqual(1000);
    await receivedEarlier(s.server, 1000);
    expect(value(await s.check(key))).toEqual({ decision: 'allow' });
  });

  it("the console's clock: a failure whose occurredAt is far in the future or the past waits by its receipt", async () => {
    const key = await makeKey();
    for (const occurredAt of ['9000-01-01T00:00:00Z', '1970-01-01T00:00:00Z']) {
      const s = scene(true);
      await s.trust();
      await post(key, s.record(UNAVAILABLE, { occurredAt }));
      const answer = value(await s.check(key));
      expect(answer).toMatchObject({ category: 'retry_too_soon' });
      if (answer.decision !== 'refuse') throw new Error('refused');
      expect(answer.retryAfterMs).toBeLessThanOrEqual(1000);
      const stored = await db.outcomeRecord.findFirstOrThrow({ where: { id: answer.record.id } });
      expect(Math.abs(stored.occurredAt.getTime() - stored.receivedAt.getTime())).toBeLessThan(60_000);
    }
  });

  it('row 6: with a budget of 5 failed attempts, the 6th is refused; guard refusals do not count', async () => {
    const key = await makeKey();
    const s = scene(true);
    await s.trust();
    await post(key, ...['1', '2', '3', '4'].map((d) => s.record(UNAVAILABLE, { argsDigest: D(d) })));
    await receivedEarlier(s.server, 120_000);
    // Refusals by guards in between: not attempts.
    for (const d of ['1', '2']) {
      await post(key, s.record({ sent: false, clientBlock: 'retry_too_soon' }, { argsDigest: D(d) }));
    }
    expect(value(await s.check(key, { argsDigest: D('5') }))).toEqual({ decision: 'allow' });
    const [fifth] = await post(key, s.record(UNAVAILABLE, { argsDigest: D('5') }));
    expect(value(await s.check(key, { argsDigest: D('6') }))).toMatchObject({
      category: 'budget_exhausted',
      retry: 'no',
      recordId: fifth,
    });
  });

  it("budgets from policy rules: the tool's call budget over the server's", async () => {
    const key = await makeKey();
    const s = scene();
    await db.policyRule.createMany({
      data: [
        { server: s.server, toolName: '*', requiredApprovals: 0, callBudget: 3, createdBy: 'test' },
        { server: s.server, toolName: 'refund_payment', requiredApprovals: 0, callBudget: 5, createdBy: 'test' },
      ],
    });
    // Five calls in the request (each its own digest, all fine): the tool's budget of 5 is spent,
    // although the server's is 3.
    const ids = await post(key, ...['1', '2', '3', '4'].map((d) => s.record(OK, { argsDigest: D(d) })));
    expect(value(await s.check(key, { argsDigest: D('5') }))).toEqual({ decision: 'allow' });
    const [fifth] = await post(key, s.record(OK, { argsDigest: D('5') }));
    expect(value(await s.check(key, { argsDigest: D('6') }))).toMatchObject({
      category: 'budget_exhausted',
      recordId: fifth,
    });
    // Another tool of the server is held to the server's 3: the request's calls already exceed it
    // (the refusal names the newest of them).
    expect(ids).toHaveLength(4);
    expect(value(await s.check(key, { tool: { name: 'issue_credit', annotations: null } }))).toMatchObject({
      category: 'budget_exhausted',
      recordId: fifth,
    });
  });

  it('row 7: a write after a permission refusal in the request is held for approval, naming it', async () => {
    const key = await makeKey();
    const s = scene();
    const [forbidden] = await post(key, s.record(FORBIDDEN, { tool: { name: 'list_refunds' } }));
    const answer = value(await s.check(key));
    expect(answer).toMatchObject({ decision: 'hold', recordId: forbidden });
    expect(answer.decision === 'hold' && answer.text).toContain(forbidden);
    expect(await refusedEvents(s.requestRef)).toEqual([]);
  });

  it("the caller's queued records are stored first, so a write's unknown still in its queue is seen", async () => {
    const key = await makeKey();
    const s = scene();
    const queued = s.record(TIMEOUT);
    const answer = value(await s.check(key, { records: [queued] }));
    const stored = await db.outcomeRecord.findFirstOrThrow({ where: { eventId: queued.eventId } });
    expect(answer).toMatchObject({ category: 'outcome_unknown', recordId: stored.id });
    // Posted again afterwards, it is a duplicate.
    expect(value(await ingestOutcomes(key, batchOf(queued)))).toMatchObject({ accepted: 0, duplicates: 1 });
  });

  it('a queued record clashing with a stored one is 422 naming it, and nothing is stored', async () => {
    const key = await makeKey();
    const s = scene();
    const stored = s.record(OK, { argsDigest: D('b') });
    await post(key, stored);
    const fresh = s.record(TIMEOUT);
    const answer = await s.check(key, { records: [fresh, { ...stored, summary: 'other' }] });
    expect(answer).toMatchObject({ ok: false, failure: 'idempotency_key_reused' });
    expect(!answer.ok && answer.errors?.map((e) => e.path)).toEqual(['records.1.eventId']);
    expect(await db.outcomeRecord.count({ where: { eventId: fresh.eventId } })).toBe(0);
  });

  it('the same eventId again answers the same refusal, with no second record or event', async () => {
    const key = await makeKey();
    const s = scene();
    await post(key, s.record(TIMEOUT));
    const eventId = uniq('guard');
    const first = value(await s.check(key, { eventId }));
    const again = value(await s.check(key, { eventId }));
    expect(again).toEqual(first);
    expect(await db.outcomeRecord.count({ where: { eventId } })).toBe(1);
    expect(await refusedEvents(s.requestRef)).toHaveLength(1);
    // An eventId already holding another record is not overwritten.
    const taken = s.record(OK, { argsDigest: D('c'), requestRef: uniq('req') });
    await post(key, taken);
    expect(await s.check(key, { eventId: taken.eventId })).toMatchObject({
      ok: false,
      failure: 'idempotency_key_reused',
      errors: [{ path: 'eventId', message: 'already sent with different content' }],
    });
  });

  it('a key limited to an organization checks only for its own (403 naming organization)', async () => {
    const limited = await makeKey(['outcomes:write'], 'acme');
    const s = scene();
    expect(value(await s.check(limited))).toEqual({ decision: 'allow' });
    const other = await s.check(limited, { organization: 'globex' });
    expect(other).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(!other.ok && other.errors?.[0].path).toBe('organization');
    const foreignRecord = await s.check(limited, { records: [s.record(TIMEOUT, { organization: 'globex' })] });
    expect(!foreignRecord.ok && foreignRecord.errors?.[0].path).toBe('records.0.organization');
    expect(await checkGuard(await makeKey(['outcomes:read']), guardCheckSchema.parse(s.body()))).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
  });

  it('refuses bad input naming the field (422 at the route)', () => {
    const s = scene();
    const paths = (over: Record<string, unknown>) => {
      const parsed = guardCheckSchema.safeParse(s.body(over));
      return parsed.success ? [] : fieldErrors(parsed.error.issues).map((e) => e.path);
    };
    expect(paths({})).toEqual([]);
    expect(paths({ eventId: 7 })).toEqual(['eventId']);
    expect(paths({ tool: { name: 3 } })).toEqual(['tool.name']);
    expect(paths({ argsDigest: 'sha256:nope' })).toEqual(['argsDigest']);
    expect(paths({ idempotencyKey: 'k'.repeat(10 * 1024) })).toEqual(['idempotencyKey']);
    expect(paths({ records: Array.from({ length: 101 }, () => s.record(OK)) })).toEqual(['records']);
    expect(paths({ records: [{ ...s.record(OK), occurredAt: 'yesterday' }] })).toEqual(['records.0.occurredAt']);
    expect(paths({ earlierRecordId: '4c1f0000-0000-4000-8000-000000000000' })).toEqual(['earlierRecordId']);
    expect(paths({ readOnly: true })).toEqual(['readOnly']);
  });

  it('a forged earlier record id is never trusted: the history is read from the database', async () => {
    const key = await makeKey();
    const s = scene();
    // A refusal-shaped record pointing anywhere, queued or posted, refuses nothing.
    const forged = s.record(
      { sent: false, clientBlock: 'outcome_unknown' },
      { earlierRecordId: '4c1f0000-0000-4000-8000-000000000000' },
    );
    expect(value(await s.check(key, { records: [forged] }))).toEqual({ decision: 'allow' });
  });

  it('two checks at once for the same unknown: both refused, two records', async () => {
    const key = await makeKey();
    const s = scene();
    const [unknown] = await post(key, s.record(TIMEOUT));
    const answers = (await Promise.all([s.check(key), s.check(key)])).map(value);
    for (const a of answers) expect(a).toMatchObject({ category: 'outcome_unknown', recordId: unknown });
    const ids = answers.map((a) => (a.decision === 'refuse' ? a.record.id : null));
    expect(new Set(ids).size).toBe(2);
    expect(await refusedEvents(s.requestRef)).toHaveLength(2);
  });

  it('two checks at once with the same eventId store one refusal and answer it twice', async () => {
    const key = await makeKey();
    const s = scene();
    await post(key, s.record(TIMEOUT));
    const eventId = uniq('guard');
    const answers = (await Promise.all([s.check(key, { eventId }), s.check(key, { eventId })])).map(value);
    expect(answers[0]).toEqual(answers[1]);
    expect(await db.outcomeRecord.count({ where: { eventId } })).toBe(1);
  });

  it('budget races: checks at once when one failed attempt is left are all answered, none half-written', async () => {
    // Allowed calls reserve nothing (their records follow): each check sees the 4 failures stored
    // and allows its call. The 6th failure posted after them is what the next check refuses.
    const key = await makeKey();
    const s = scene(true);
    await s.trust();
    await post(key, ...['1', '2', '3', '4'].map((d) => s.record(UNAVAILABLE, { argsDigest: D(d) })));
    await receivedEarlier(s.server, 120_000);
    const answers = (
      await Promise.all(['5', '6', '7'].map((d) => s.check(key, { argsDigest: D(d), records: [] })))
    ).map(value);
    expect(answers).toEqual([{ decision: 'allow' }, { decision: 'allow' }, { decision: 'allow' }]);
    expect(await db.outcomeRecord.count({ where: { server: s.server } })).toBe(4);
  });

  it('the route: 200 with the decision, 422 naming each bad field, 403 for a key without outcomes:write', async () => {
    const created = await createApiKey(cli, { name: uniq('key'), scopes: ['outcomes:write'] });
    const readOnlyKey = await createApiKey(cli, { name: uniq('key'), scopes: ['outcomes:read'] });
    if (!created.ok || !readOnlyKey.ok) throw new Error('keys');
    const s = scene();
    const send = async (body: unknown, token = created.value.secret) => {
      const res = await POST(
        new Request('http://127.0.0.1/api/v1/guards/check', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        { params: Promise.resolve({}) } as never,
      );
      return { status: res.status, json: await res.json() };
    };
    expect(await send(s.body())).toEqual({ status: 200, json: { decision: 'allow' } });
    const bad = async (over: Record<string, unknown>) => {
      const { status, json } = await send(s.body(over));
      expect(status).toBe(422);
      return json.errors.map((e: { path: string }) => e.path);
    };
    expect(await bad({ principal: 42 })).toEqual(['principal']);
    expect(await bad({ idempotencyKey: 'k'.repeat(10 * 1024) })).toEqual(['idempotencyKey']);
    expect(await bad({ records: Array.from({ length: 101 }, () => s.record(OK)) })).toEqual(['records']);
    expect(await bad({ decision: 'allow' })).toEqual(['decision']);
    expect((await send(s.body(), readOnlyKey.value.secret)).status).toBe(403);
  });
});
