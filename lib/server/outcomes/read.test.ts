import { describe, expect, it } from 'vitest';
import { getOutcome, ingestOutcomes, listOutcomes, listTaskRecords, type OutcomeView } from '.';
import { db } from '../db/db';
import { trustServer } from '../policy/trusted-servers';
import { makeUser, uniq } from '@/testing/factories';
import { classifyRecord } from '@/lib/outcomes/classify';
import { makeKey, makeRecord, batchOf, value, query, countFor } from '@/testing/outcomes-fixtures';
import { cli } from '@/lib/auth/actor';

describe('organization-limited keys', () => {
  it('write only their organization, naming the record otherwise, and store nothing then', async () => {
    const org = uniq('org');
    const key = await makeKey(['outcomes:write', 'outcomes:read'], org);
    const requestRef = uniq('req');
    const res = await ingestOutcomes(
      key,
      batchOf(makeRecord({ requestRef, organization: org }), makeRecord({ requestRef, organization: 'acme' })),
    );
    expect(res).toMatchObject({ ok: false, failure: 'forbidden', errors: [{ path: 'records.1.organization' }] });
    expect(!res.ok && res.detail).toContain('records.1');
    expect(await countFor(requestRef)).toBe(0);
    expect(value(await ingestOutcomes(key, batchOf(makeRecord({ requestRef, organization: org })))).accepted).toBe(1);
  });

  it('read only their organization, whatever the filter', async () => {
    const org = uniq('org');
    const limited = await makeKey(['outcomes:write', 'outcomes:read'], org);
    const unlimited = await makeKey();
    const requestRef = uniq('req');
    const own = value(await ingestOutcomes(limited, batchOf(makeRecord({ requestRef, organization: org })))).records[0];
    const foreign = value(await ingestOutcomes(unlimited, batchOf(makeRecord({ requestRef, organization: 'acme' }))))
      .records[0];

    const seen = value(await listOutcomes(limited, { requestRef }));
    expect(seen.items.map((i) => i.id)).toEqual([own.id]);
    expect(value(await listOutcomes(limited, { requestRef, organization: 'acme' })).items).toEqual([]);
    expect(value(await listOutcomes(limited, {})).items.every((i) => i.organization === org)).toBe(true);
    expect(await getOutcome(limited, foreign.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(value(await getOutcome(limited, own.id)).id).toBe(own.id);
    expect(value(await listOutcomes(unlimited, { requestRef })).items).toHaveLength(2);
  });
});

describe('listOutcomes and getOutcome', () => {
  it('pages newest (or oldest) first through equal timestamps without duplicates or gaps', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    // 23 records on 4 distinct instants: most pages end inside a run of equal occurredAt.
    const instants = [
      '2026-11-30T12:00:00Z',
      '2026-11-30T12:00:00.001Z',
      '2026-11-30T13:00:00+01:00',
      '2026-11-29T23:59:59.999Z',
    ];
    const batch = batchOf(
      ...Array.from({ length: 23 }, (_, i) => makeRecord({ requestRef, occurredAt: instants[i % 4] })),
    );
    const { records } = value(await ingestOutcomes(key, batch));
    const expected = records
      .map((r, i) => ({ id: r.id, at: Date.parse(batch.records[i].occurredAt) }))
      .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
      .map((r) => r.id);

    for (const order of [undefined, 'oldest'] as const) {
      for (const limit of [1, 4, 5, 23, 50]) {
        const ids: string[] = [];
        let cursor: string | null | undefined;
        let pages = 0;
        do {
          const params = {
            requestRef,
            limit: String(limit),
            ...(order ? { order } : {}),
            ...(cursor ? { cursor } : {}),
          };
          const page = value(await listOutcomes(key, query(params)));
          expect(page.items.length).toBeLessThanOrEqual(limit);
          ids.push(...page.items.map((i) => i.id));
          cursor = page.nextCursor;
          pages++;
        } while (cursor && pages < 30);
        // Oldest first is exactly the reverse: occurredAt ascending, then id ascending.
        expect(ids, `${order ?? 'newest'} limit ${limit}`).toEqual(order ? [...expected].reverse() : expected);
        expect(pages).toBe(Math.max(1, Math.ceil(23 / limit)));
      }
    }
  });

  it('defaults to 50 per page', async () => {
    const key = await makeKey();
    const requestRef = uniq('req');
    value(await ingestOutcomes(key, batchOf(...Array.from({ length: 51 }, () => makeRecord({ requestRef })))));
    const page = value(await listOutcomes(key, query({ requestRef })));
    expect(page.items).toHaveLength(50);
    expect(page.nextCursor).toEqual(expect.any(String));
  });

  it('applies every filter', async () => {
    const key = await makeKey();
    const trusted = uniq('trusted');
    await trustServer(cli, trusted);
    const requestRef = uniq('req');
    const records = [
      makeRecord({
        requestRef,
        occurredAt: '2026-11-01T10:00:00Z',
        tool: { name: 'refund_payment' },
        server: 'billing-mcp',
        organization: 'acme',
        principal: 'p1',
        idempotencyKey: 'refund-1',
        grantId: 'grt_1',
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-02T10:00:00Z',
        tool: { name: 'get_order' },
        server: 'orders-mcp',
        organization: 'globex',
        principal: 'p2',
        observed: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-03T10:00:00Z',
        tool: { name: 'get_order', annotations: { readOnlyHint: true } },
        server: trusted,
        organization: 'acme',
        principal: 'p2',
        observed: { sent: true, clientError: 'timeout' },
      }),
      makeRecord({
        requestRef,
        occurredAt: '2026-11-04T10:00:00Z',
        tool: { name: 'refund_payment' },
        server: 'billing-mcp',
        organization: 'acme',
        principal: 'p1',
        observed: { sent: false, clientBlock: 'approval_required' },
      }),
    ];
    const ids = value(await ingestOutcomes(key, batchOf(...records))).records.map((r) => r.id);
    const cases: [Record<string, string>, number[]][] = [
      [{}, [3, 2, 1, 0]],
      [{ delivery: 'completed' }, [0]],
      [{ delivery: 'rejected' }, [1]],
      [{ delivery: 'unknown' }, [2]],
      [{ category: 'approval_required' }, [3]],
      [{ boundary: 'client' }, [3, 2]],
      [{ retry: 'backoff' }, [2]],
      [{ retry: 'after_approval' }, [3, 1]],
      [{ readOnly: 'true' }, [2]],
      [{ readOnly: 'false', delivery: 'completed' }, [0]],
      [{ tool: 'get_order' }, [2, 1]],
      [{ server: 'billing-mcp' }, [3, 0]],
      [{ organization: 'globex' }, [1]],
      [{ principal: 'p1' }, [3, 0]],
      [{ idempotencyKey: 'refund-1' }, [0]],
      [{ grantId: 'grt_1' }, [0]],
      [{ from: '2026-11-02T10:00:00Z' }, [3, 2, 1]],
      [{ to: '2026-11-03T10:00:00Z' }, [1, 0]],
      [{ from: '2026-11-02T00:00:00Z', to: '2026-11-04T00:00:00+02:00' }, [2, 1]],
      [{ tool: 'get_order', principal: 'p2', organization: 'acme' }, [2]],
      [{ delivery: 'never_sent', server: 'orders-mcp' }, []],
      [{ delivery: '' }, [3, 2, 1, 0]],
    ];
    for (const [filter, expected] of cases) {
      const page = value(await listOutcomes(key, query({ requestRef, ...filter })));
      expect(
        page.items.map((i) => i.id),
        JSON.stringify(filter),
      ).toEqual(expected.map((i) => ids[i]));
    }
    expect(value(await listOutcomes(key, query({ requestRef: uniq('none') }))).items).toEqual([]);
  });

  it('returns views with the docs/api.md fields, no more', async () => {
    const key = await makeKey();
    const record = makeRecord({
      durationMs: 812,
      idempotencyKey: 'refund-4411-v1',
      attempt: 1,
      agent: 'support-bot',
      serverVersion: '2.3.0',
      protocolVersion: '2025-11-25',
      mcpRequestId: 17,
      sessionId: 'b7f1c2',
      grantId: 'grt_1',
      argsDigest: `sha256:${'ab'.repeat(32)}`,
      summary: 'Refund 40.00 EUR on order 4411',
      occurredAt: '2026-11-30T13:00:00+01:00',
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
    });
    const { id } = value(await ingestOutcomes(key, batchOf(record))).records[0];
    const view: OutcomeView = value(await getOutcome(key, id));
    const { sessionId: _hidden, occurredAt: _at, ...sent } = record;
    expect(view).toEqual({
      ...sent,
      id,
      occurredAt: new Date('2026-11-30T12:00:00Z'),
      classification: classifyRecord(record, false),
      annotationsTrusted: false,
      receivedAt: expect.any(Date),
      classifierVersion: 3,
      resolution: null,
      earlierRecordId: null,
    });
  });

  it('people read with outcomes.read; keys need outcomes:read; unknown and malformed ids are not found', async () => {
    const key = await makeKey();
    const { id } = value(await ingestOutcomes(key, batchOf(makeRecord()))).records[0];
    const support = await makeUser('support');
    expect(value(await getOutcome(support, id)).id).toBe(id);
    expect(value(await getOutcome({ ...support, kind: 'user', tokenId: null }, id)).id).toBe(id);
    expect(value(await listOutcomes(support, {})).items.length).toBeGreaterThan(0);
    const writeOnly = await makeKey(['outcomes:write']);
    expect(await listOutcomes(writeOnly, {})).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await getOutcome(writeOnly, id)).toMatchObject({ ok: false, failure: 'forbidden' });
    for (const missing of ['00000000-0000-4000-8000-000000000000', 'nope', `${id}x`, "' OR 1=1 --", '']) {
      expect(await getOutcome(key, missing)).toMatchObject({ ok: false, failure: 'not_found' });
    }
  });
});

describe("a task's records (listTaskRecords)", () => {
  it('links the records of one task id, oldest first, within one organization only', async () => {
    const org = uniq('org');
    const limited = await makeKey(['outcomes:write', 'outcomes:read'], org);
    const unlimited = await makeKey();
    const taskId = uniq('tsk');
    const at = (min: number) => `2026-11-30T12:0${min}:00Z`;
    const ingested = value(
      await ingestOutcomes(
        limited,
        batchOf(
          makeRecord({
            organization: org,
            occurredAt: at(2),
            observed: { sent: true, task: { id: taskId, status: 'completed' }, result: { isError: false } },
          }),
          makeRecord({
            organization: org,
            occurredAt: at(0),
            observed: { sent: true, resultType: 'task', task: { id: taskId, status: 'working' } },
          }),
          makeRecord({
            organization: org,
            occurredAt: at(1),
            observed: { sent: true, task: { id: taskId, status: 'input_required' } },
          }),
          // Another task of the same organization: not linked.
          makeRecord({
            organization: org,
            occurredAt: at(1),
            observed: { sent: true, task: { id: `${taskId}x`, status: 'working' } },
          }),
        ),
      ),
    ).records;
    // The same task id in another organization: never linked.
    value(
      await ingestOutcomes(
        unlimited,
        batchOf(
          makeRecord({
            organization: 'acme',
            occurredAt: at(3),
            observed: { sent: true, task: { id: taskId, status: 'cancelled' } },
          }),
        ),
      ),
    );
    const row = await db.outcomeRecord.findFirstOrThrow({ where: { id: ingested[0].id } });
    expect(row.taskId).toBe(taskId);

    const history = value(await listTaskRecords(unlimited, org, taskId));
    expect(history.map((h) => [h.id, h.status, h.category])).toEqual([
      [ingested[1].id, 'working', 'task_running'],
      [ingested[2].id, 'input_required', 'task_input_required'],
      [ingested[0].id, 'completed', 'ok'],
    ]);
    expect(history.every((h) => h.classifierVersion === 3)).toBe(true);
    // A key limited to this organization sees the same; asking about another organization: nothing.
    expect(value(await listTaskRecords(limited, org, taskId))).toHaveLength(3);
    expect(value(await listTaskRecords(limited, 'acme', taskId))).toEqual([]);
    expect(value(await listTaskRecords(unlimited, 'acme', taskId)).map((h) => h.status)).toEqual(['cancelled']);
  });
});
