// Resolving an unknown (docs/design.md "Resolving an unknown"; docs/api.md `resolution`), against
// real PostgreSQL: by a later record of the same operation or MCP task, in and out of order; never
// by near misses. By state checks: state-check.test.ts.
import { describe, expect, it } from 'vitest';
import { getOutcome, listOutcomes } from '.';
import { uniq } from '@/testing/factories';
import { makeKey, makeRecord, OK, query, value } from '@/testing/outcomes-fixtures';
import { digest, operation, post, resolutionOf, TIMEOUT } from '@/testing/resolution-fixtures';
import type { Observed, Outcome } from '@/lib/outcomes/schemas';

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

  it('under one key, only the completion with the same arguments settles: never an earlier one with others', async () => {
    const key = await makeKey();
    const attempt = operation();
    const [unknown] = await post(key, attempt(0, TIMEOUT));
    const [other] = await post(key, attempt(1, OK, { argsDigest: digest() }));
    expect(value(await getOutcome(key, unknown)).resolution).toBeNull();
    const [same] = await post(key, attempt(2, OK));
    const view = value(await getOutcome(key, unknown));
    expect(view.resolution).toMatchObject({ by: 'record', verdict: 'happened', recordId: same });
    expect(view.classification.nextStep).not.toContain(other);
  });

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
