// What an incident counts as one operation (docs/design.md "Resolving an unknown"), through the
// real ingest and database: one idempotency key with one argument digest, or one MCP task id;
// without a key, one attempt. The later completion of one operation never hides another that is
// unknown, in the summary, its sentence, the resolution of the records and the Markdown report.
import { beforeAll, describe, expect, it } from 'vitest';
import { getIncident, incidentReport } from '.';
import { uniq } from '@/testing/factories';
import { OK, record, setUpIncidentActors, support, value } from '@/testing/incidents-fixtures';
import type { Observed } from '@/lib/outcomes/schemas';

beforeAll(setUpIncidentActors);

const TIMEOUT: Observed = { sent: true, clientError: 'timeout' };
// Another note's arguments: a digest no other record of these tests carries.
const OTHER_DIGEST = 'sha256:bd42cc88874717151f1c55b154ff27c4283e476e7eb92189c804ae4396ec5fd3';
const NOTE_4411 = 'add_note on ledger-mcp: Add a note to order 4411';
const NOTE_4412 = 'add_note on ledger-mcp: Add a note to order 4412';

/** A minute-stamped time in the past, so "later" is by occurredAt and not by posting order. */
const minute = (m: number) => new Date(Date.UTC(2026, 0, 5, 9, m)).toISOString();
const unknownLine = (key: string) =>
  `${NOTE_4411} (timeout; key ${key}): it may have taken effect; check before repeating`;

async function incidentOf(ref: string) {
  const incident = value(await getIncident(support, ref));
  const resolutionOf = (id: string) => incident.records.find((r) => r.id === id)?.resolution ?? null;
  return { incident, resolutionOf, markdown: incidentReport(incident) };
}

describe('an incident counts operations', () => {
  it('same key, other arguments: two operations, the earlier one still unknown', async () => {
    const ref = uniq('req');
    const key = uniq('note');
    const unknown = await record(ref, { idempotencyKey: key, observed: TIMEOUT, occurredAt: minute(0) });
    await record(ref, {
      idempotencyKey: key,
      argsDigest: OTHER_DIGEST,
      summary: 'Add a note to order 4412',
      occurredAt: minute(1),
    });

    const { incident, resolutionOf, markdown } = await incidentOf(ref);
    expect(resolutionOf(unknown)).toBeNull();
    expect(incident.summary).toEqual({
      done: [NOTE_4412],
      notDone: [],
      unknown: [unknownLine(key)],
      unknownTools: ['add_note'],
    });
    expect(incident.sentence).toBe('1 operation done, 1 unknown: check before repeating add_note.');
    expect(incident.findings.map((f) => f.kind)).toContain('unsafe_replay');
    expect(markdown).toContain('\n1 operation done, 1 unknown: check before repeating add\\_note.\n');
    expect(markdown).toContain('## Done (1)');
    expect(markdown).toContain('## Unknown: check before repeating (1)');
  });

  it('same key and arguments: one operation, settled by the later completion, which the summary names', async () => {
    const ref = uniq('req');
    const key = uniq('note');
    const unknown = await record(ref, {
      idempotencyKey: key,
      observed: TIMEOUT,
      agent: 'support-bot',
      occurredAt: minute(0),
    });
    const done = await record(ref, { idempotencyKey: key, agent: 'support-bot', occurredAt: minute(1) });

    const { incident, resolutionOf, markdown } = await incidentOf(ref);
    expect(resolutionOf(unknown)).toMatchObject({ by: 'record', verdict: 'happened', recordId: done });
    expect(incident.summary).toEqual({
      done: [`${NOTE_4411} (2 attempts; it happened, resolved by a later record (support-bot))`],
      notDone: [],
      unknown: [],
      unknownTools: [],
    });
    expect(incident.sentence).toBe('1 operation done.');
    expect(incident.findings.map((f) => f.kind)).not.toContain('unsafe_replay');
    expect(markdown).toContain('## Unknown: check before repeating (0)');
  });

  it('posted out of order: each record takes its place by occurredAt, and only its own operation settles it', async () => {
    const ref = uniq('req');
    const key = uniq('note');
    const done = await record(ref, { idempotencyKey: key, agent: 'support-bot', occurredAt: minute(2) });
    const settled = await record(ref, {
      idempotencyKey: key,
      observed: TIMEOUT,
      agent: 'support-bot',
      occurredAt: minute(0),
    });
    const open = await record(ref, {
      idempotencyKey: key,
      argsDigest: OTHER_DIGEST,
      summary: 'Add a note to order 4412',
      observed: TIMEOUT,
      occurredAt: minute(1),
    });

    const { incident, resolutionOf } = await incidentOf(ref);
    expect(resolutionOf(settled)).toMatchObject({ by: 'record', verdict: 'happened', recordId: done });
    expect(resolutionOf(open)).toBeNull();
    expect(incident.summary.done).toEqual([
      `${NOTE_4411} (2 attempts; it happened, resolved by a later record (support-bot))`,
    ]);
    expect(incident.summary.unknown).toEqual([
      `${NOTE_4412} (timeout; key ${key}): it may have taken effect; check before repeating`,
    ]);
    expect(incident.sentence).toBe('1 operation done, 1 unknown: check before repeating add_note.');
  });

  it('without a key, each attempt is one operation: a later completion settles nothing', async () => {
    const ref = uniq('req');
    const unknown = await record(ref, { observed: TIMEOUT, occurredAt: minute(0) });
    await record(ref, { occurredAt: minute(1) });

    const { incident, resolutionOf } = await incidentOf(ref);
    expect(resolutionOf(unknown)).toBeNull();
    expect(incident.summary.done).toEqual([NOTE_4411]);
    expect(incident.summary.unknown).toEqual([
      `${NOTE_4411} (timeout): it may have taken effect; check before repeating`,
    ]);
    expect(incident.sentence).toBe('1 operation done, 1 unknown: check before repeating add_note.');
  });

  it('one MCP task across records is one operation', async () => {
    const ref = uniq('req');
    const id = uniq('task');
    const running = await record(ref, {
      observed: { sent: true, httpStatus: 200, task: { id, status: 'working' } },
      occurredAt: minute(0),
    });
    const result = await record(ref, {
      argsDigest: undefined,
      observed: { ...OK, task: { id, status: 'completed' } },
      occurredAt: minute(1),
    });

    const { incident, resolutionOf } = await incidentOf(ref);
    expect(resolutionOf(running)).toMatchObject({ by: 'record', verdict: 'happened', recordId: result });
    expect(incident.summary).toEqual({
      done: [`${NOTE_4411} (2 records of task ${id}; it happened, resolved by a later record (user_193))`],
      notDone: [],
      unknown: [],
      unknownTools: [],
    });
    expect(incident.sentence).toBe('1 operation done.');
  });
});
