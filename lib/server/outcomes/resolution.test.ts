// Resolving an unknown (docs/design.md "Resolving an unknown"; docs/api.md `resolution`, `state-check`),
// against real PostgreSQL: by a later record of the same operation, in and out of order; never by
// near misses; by state checks, with their boundaries and races.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getOutcome, ingestOutcomes, listOutcomes, recordStateCheck } from '.';
import { db } from '../db/db';
import { makeUser, uniq } from '@/testing/factories';
import { batchOf, makeKey, makeRecord, OK, query, value } from '@/testing/outcomes-fixtures';
import type { Observed, Outcome } from '@/lib/outcomes/schemas';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';
import type { Actor } from '@/lib/auth/actor';

const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
const REFUSED_VALIDATION: Observed = {
  sent: true,
  httpStatus: 200,
  result: { isError: true, errorCategory: 'validation' },
};
const REFUSED_401: Observed = { sent: true, httpStatus: 401 };
const REFUSED_CONFLICT: Observed = {
  sent: true,
  httpStatus: 200,
  result: { isError: true, errorCategory: 'conflict' },
};
const NOT_SENT: Observed = { sent: false, clientBlock: 'approval_required' };

const digest = () => `sha256:${randomBytes(32).toString('hex')}`;

/** One operation's attempts: the same org, server, tool, key and digest unless overridden. */
function operation() {
  const requestRef = uniq('req');
  const idempotencyKey = uniq('refund');
  const argsDigest = digest();
  return (minute: number, observed: Observed, over: Partial<Outcome> = {}) =>
    makeRecord({
      requestRef,
      idempotencyKey,
      argsDigest,
      occurredAt: `2026-11-30T12:${String(minute).padStart(2, '0')}:00Z`,
      agent: 'support-bot',
      observed,
      ...over,
    });
}

async function post(key: Actor, ...records: Outcome[]) {
  return value(await ingestOutcomes(key, batchOf(...records))).records.map((r) => r.id);
}
const resolutionOf = async (id: string) => (await db.outcomeRecord.findFirstOrThrow({ where: { id } })).resolvedAt;

describe('resolution by a later record of the same operation', () => {
  // [name, the later record's observation, its overrides, expected verdict or null (no resolution)]
  const cases: [string, Observed, Partial<Outcome>, 'happened' | 'did_not_happen' | null][] = [
    ['completed', OK, {}, 'happened'],
    ['refused by the tool (validation)', REFUSED_VALIDATION, {}, 'did_not_happen'],
    ['refused at admission (401): says nothing', REFUSED_401, {}, null],
    ["the tool's conflict: says nothing", REFUSED_CONFLICT, {}, null],
    ['never sent: says nothing', NOT_SENT, {}, null],
    ['another unknown: says nothing', TIMEOUT, {}, null],
    ['near miss: other arguments under the same key', OK, { argsDigest: digest() }, null],
    ['near miss: no key', OK, { idempotencyKey: undefined }, null],
    ['near miss: no digest', OK, { argsDigest: undefined }, null],
    ['near miss: another tool', OK, { tool: { name: 'cancel_order' } }, null],
    ['near miss: another organization', OK, { organization: 'globex' }, null],
  ];
  for (const [name, observed, over, verdict] of cases) {
    it(`${name} → ${verdict ?? 'still unresolved'}`, async () => {
      const key = await makeKey();
      const attempt = operation();
      const [unknown] = await post(key, attempt(0, TIMEOUT));
      const [later] = await post(key, attempt(1, observed, over));
      const view = value(await getOutcome(key, unknown));
      if (verdict === null) {
        expect(view.resolution).toBeNull();
        expect(view.classification.nextStep).not.toContain('later attempt');
      } else {
        expect(view.resolution).toMatchObject({ by: 'record', verdict, recordId: later, who: 'support-bot' });
        expect(view.classification.nextStep).toContain(`record ${later}`);
        expect(view.classification.nextStep).not.toMatch(/\bretry\b/i);
      }
    });
  }

  it('an earlier completed record does not resolve a later unknown', async () => {
    const key = await makeKey();
    const attempt = operation();
    await post(key, attempt(0, OK));
    const [unknown] = await post(key, attempt(1, TIMEOUT));
    expect(value(await getOutcome(key, unknown)).resolution).toBeNull();
  });

  it('out of order: the settler stored first resolves the unknown that arrives later', async () => {
    const key = await makeKey();
    const attempt = operation();
    const [settler] = await post(key, attempt(5, OK));
    const [unknown] = await post(key, attempt(1, TIMEOUT));
    expect(value(await getOutcome(key, unknown)).resolution).toMatchObject({ by: 'record', recordId: settler });
  });

  it('in one batch, and by the earliest later settler; another batch of another key resolves too', async () => {
    const key = await makeKey();
    const attempt = operation();
    const [unknown, , first] = await post(key, attempt(3, OK), attempt(0, TIMEOUT), attempt(1, REFUSED_VALIDATION));
    expect(value(await getOutcome(key, first)).resolution).toBeNull();
    expect(value(await getOutcome(key, unknown)).resolution).toBeNull(); // completed: never resolved
    const [u2] = await post(key, attempt(0, TIMEOUT, { eventId: uniq('evt') }));
    expect(value(await getOutcome(key, u2)).resolution).toMatchObject({ recordId: first, verdict: 'did_not_happen' });
    const other = await makeKey();
    const [u3] = await post(other, attempt(10, TIMEOUT));
    const [s3] = await post(key, attempt(11, OK));
    expect(value(await getOutcome(key, u3)).resolution).toMatchObject({ recordId: s3, verdict: 'happened' });
  });

  it('an unknown and its settler posted at the same moment by two keys: resolved whichever commits first', async () => {
    for (let i = 0; i < 5; i++) {
      const [a, b] = await Promise.all([makeKey(), makeKey()]);
      const attempt = operation();
      const [[unknown]] = await Promise.all([post(a, attempt(0, TIMEOUT)), post(b, attempt(1, OK))]);
      expect(await resolutionOf(unknown)).not.toBeNull();
    }
  });

  it('a duplicate of the settler changes nothing; the list filters resolved and unresolved unknowns', async () => {
    const key = await makeKey();
    const attempt = operation();
    const ref = attempt(0, TIMEOUT).requestRef;
    const [resolved] = await post(key, attempt(0, TIMEOUT));
    const settler = attempt(1, OK);
    await post(key, settler);
    const before = await resolutionOf(resolved);
    await post(key, settler);
    expect(await resolutionOf(resolved)).toEqual(before);
    const [open] = await post(key, attempt(2, TIMEOUT, { argsDigest: digest() }));
    const ids = async (resolution: string) =>
      value(await listOutcomes(key, query({ requestRef: ref, resolution }))).items.map((r) => r.id);
    expect(await ids('resolved')).toEqual([resolved]);
    expect(await ids('unresolved')).toEqual([open]);
  });
});

describe('resolution by a later record of the same MCP task', () => {
  const task = (id: string, status: string, rest: Partial<Observed> = {}): Observed =>
    ({ sent: true, ...rest, task: { id, status } }) as Observed;
  // [name, the later record (task id 'same' or 'other', status, observation), its overrides, verdict]
  const cases: [string, 'same' | 'other', string, Partial<Observed>, Partial<Outcome>, 'happened' | null][] = [
    [
      'the task completed with a result',
      'same',
      'completed',
      { httpStatus: 200, result: { isError: false } },
      {},
      'happened',
    ],
    ['the task still working: says nothing', 'same', 'working', {}, {}, null],
    [
      'near miss: another task completed',
      'other',
      'completed',
      { httpStatus: 200, result: { isError: false } },
      {},
      null,
    ],
    [
      'near miss: the same task id in another organization',
      'same',
      'completed',
      { httpStatus: 200, result: { isError: false } },
      { organization: 'globex' },
      null,
    ],
  ];
  for (const [name, which, status, rest, over, verdict] of cases) {
    it(`${name} → ${verdict ?? 'still unresolved'}`, async () => {
      const key = await makeKey();
      const id = uniq('task');
      // No idempotency key or digest: only the task links the two.
      const base = { requestRef: uniq('req'), idempotencyKey: undefined, argsDigest: undefined, agent: 'support-bot' };
      const [running] = await post(
        key,
        makeRecord({ ...base, occurredAt: '2026-11-30T12:00:00Z', observed: task(id, 'working') }),
      );
      expect(value(await getOutcome(key, running)).classification.delivery).toBe('unknown');
      const [later] = await post(
        key,
        makeRecord({
          ...base,
          occurredAt: '2026-11-30T12:01:00Z',
          observed: task(which === 'same' ? id : uniq('task'), status, rest),
          ...over,
        }),
      );
      const view = value(await getOutcome(key, running));
      if (verdict === null) expect(view.resolution).toBeNull();
      else expect(view.resolution).toMatchObject({ by: 'record', verdict, recordId: later });
    });
  }
});

describe('state checks', () => {
  const body = (verdict: string, note: unknown = 'Checked the payment provider: no refund for order 4411.') =>
    stateCheckBodySchema.safeParse({ verdict, note });

  it('refuses a wrong verdict, a missing, empty or huge note (the body schema, 422 at the route)', () => {
    expect(body('maybe').success).toBe(false);
    expect(stateCheckBodySchema.safeParse({ verdict: 'happened' }).success).toBe(false);
    expect(body('happened', '   ').success).toBe(false);
    expect(body('happened', 'x'.repeat(501)).success).toBe(false);
    expect(body('happened', 'x'.repeat(500)).success).toBe(true);
    expect(stateCheckBodySchema.safeParse({ verdict: 'happened', note: 'n', extra: 1 }).success).toBe(false);
  });

  it('a person resolves an unknown: stored, masked, audited, shown; a second check is 409 naming the first', async () => {
    const key = await makeKey();
    const support = await makeUser('support');
    const [unknown] = await post(key, operation()(0, TIMEOUT));
    const note = 'No refund in the provider; asked ana@example.com';
    const done = value(await recordStateCheck(support, unknown, { verdict: 'did_not_happen', note }));
    expect(done.resolution).toMatchObject({ by: 'state_check', verdict: 'did_not_happen' });
    expect(done.resolution?.who).toContain(support.email);
    expect(done.resolution?.note).toBe('No refund in the provider; asked [masked:email]');
    expect(done.classification.nextStep).toContain('did not take effect');
    const audit = await db.auditEntry.findFirstOrThrow({ where: { action: 'outcome.state_check', targetId: unknown } });
    expect(audit.actor).toBe(support.email);
    const again = await recordStateCheck(await makeUser('admin'), unknown, { verdict: 'happened', note: 'x' });
    expect(again).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!again.ok && again.detail).toContain(support.email);
    expect(!again.ok && again.detail).toContain('it did not happen');
  });

  it('a record that is not unknown is 409; a record resolved by a later record is 409 naming it', async () => {
    const key = await makeKey();
    const reviewer = await makeUser('reviewer');
    const attempt = operation();
    const [unknown] = await post(key, attempt(0, TIMEOUT));
    const [settler] = await post(key, attempt(1, OK));
    const completed = await recordStateCheck(reviewer, settler, { verdict: 'happened', note: 'n' });
    expect(completed).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!completed.ok && completed.detail).toContain('not unknown');
    const settled = await recordStateCheck(reviewer, unknown, { verdict: 'happened', note: 'n' });
    expect(settled).toMatchObject({ ok: false, failure: 'conflict' });
    expect(!settled.ok && settled.detail).toContain(`record ${settler}`);
  });

  it("another organization's record is 404 for a limited key; outcomes:read alone may not check", async () => {
    const key = await makeKey();
    const [unknown] = await post(key, operation()(0, TIMEOUT));
    const globex = await makeKey(['outcomes:write'], 'globex');
    expect(await recordStateCheck(globex, unknown, { verdict: 'happened', note: 'n' })).toMatchObject({
      failure: 'not_found',
    });
    expect(
      await recordStateCheck(globex, '00000000-0000-4000-8000-000000000000', { verdict: 'happened', note: 'n' }),
    ).toMatchObject({
      failure: 'not_found',
    });
    expect(await recordStateCheck(globex, 'not-a-uuid', { verdict: 'happened', note: 'n' })).toMatchObject({
      failure: 'not_found',
    });
    const reader = await makeKey(['outcomes:read']);
    expect(await recordStateCheck(reader, unknown, { verdict: 'happened', note: 'n' })).toMatchObject({
      failure: 'forbidden',
    });
    expect(await resolutionOf(unknown)).toBeNull();
    const acme = await makeKey(['outcomes:write'], 'acme');
    const checked = value(await recordStateCheck(acme, unknown, { verdict: 'happened', note: 'n' }));
    expect(checked.resolution).toMatchObject({ by: 'state_check', who: `API key ${acme.name}` });
  });

  it('two people at once: exactly one wins, the other gets a conflict naming the winner', async () => {
    for (let round = 0; round < 5; round++) {
      const key = await makeKey();
      const [unknown] = await post(key, operation()(0, TIMEOUT));
      const [ana, bo] = await Promise.all([makeUser('support'), makeUser('reviewer')]);
      const results = await Promise.all([
        recordStateCheck(ana, unknown, { verdict: 'happened', note: 'ana saw it' }),
        recordStateCheck(bo, unknown, { verdict: 'did_not_happen', note: 'bo did not' }),
      ]);
      const winners = results.filter((r) => r.ok);
      const losers = results.filter((r) => !r.ok);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      const winner = results[0].ok ? ana : bo;
      expect(losers[0]).toMatchObject({ failure: 'conflict' });
      expect(!losers[0].ok && losers[0].detail).toContain(winner.email);
      expect(await db.outcomeStateCheck.count({ where: { recordId: unknown } })).toBe(1);
      expect(await db.auditEntry.count({ where: { action: 'outcome.state_check', targetId: unknown } })).toBe(1);
    }
  });

  it('a state check racing the settling record: one resolution, never two', async () => {
    for (let round = 0; round < 5; round++) {
      const key = await makeKey();
      const attempt = operation();
      const [unknown] = await post(key, attempt(0, TIMEOUT));
      const support = await makeUser('support');
      const [check] = await Promise.all([
        recordStateCheck(support, unknown, { verdict: 'did_not_happen', note: 'n' }),
        post(key, attempt(1, OK)),
      ]);
      const row = await db.outcomeRecord.findFirstOrThrow({ where: { id: unknown } });
      expect(row.resolutionBy).toBe(check.ok ? 'state_check' : 'record');
      expect(await db.outcomeStateCheck.count({ where: { recordId: unknown } })).toBe(check.ok ? 1 : 0);
    }
  });
});
