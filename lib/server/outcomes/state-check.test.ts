// State checks (docs/design.md "Resolving an unknown"; docs/api.md `state-check`), against real
// PostgreSQL: a person or a key settles an unknown, with the boundaries and races of doing so.
import { describe, expect, it } from 'vitest';
import { recordStateCheck } from '.';
import { db } from '../db/db';
import { makeUser } from '@/testing/factories';
import { makeKey, OK, value } from '@/testing/outcomes-fixtures';
import { operation, post, resolutionOf, TIMEOUT } from '@/testing/resolution-fixtures';
import { stateCheckBodySchema } from '@/lib/outcomes/resolution';

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
