import { describe, expect, it } from 'vitest';
import { incidentMarkdown } from './markdown';
import { approvedTwice, atSeconds as at, incidentApproval as approval, story } from '../../testing/incident-records';
import { buildTimeline } from './timeline';
import { incidentSentence, timelineReportRows } from './timeline-report';

const NOW = at(100_000);

describe('timelineReportRows and the Markdown timeline', () => {
  const timeline = buildTimeline(
    story({ obs: 'ok', at: 30, grant: 'grt_1', key: 'refund-1' }),
    [
      approvedTwice,
      approval({
        id: 'apr_2',
        createdAt: at(40),
        status: 'denied',
        decisions: [{ reviewer: 'rui@example.test', decision: 'deny', reason: 'duplicate | of apr_1', at: at(41) }],
      }),
    ],
    NOW,
  );
  const rows = timelineReportRows(timeline);

  it('one row per entry, kind and status apart from the text', () => {
    expect(rows.map((r) => [r.kind, r.status ?? null])).toEqual([
      ['approval_requested', null],
      ['decision', 'approve'],
      ['decision', 'approve'],
      ['grant_issued', null],
      ['grant_redeemed', null],
      ['outcome', 'completed · ok'],
      ['approval_requested', null],
      ['decision', 'deny'],
    ]);
    expect(rows[5].detail).toContain('key refund-1 — grant grt_1');
    expect(rows[7]).toMatchObject({ title: 'Denied by rui@example.test', detail: 'Reason: duplicate | of apr_1' });
  });

  it('the report names each kind and escapes the reason', () => {
    const md = incidentMarkdown({
      requestRef: 'req_1',
      sentence: 'A fuller sentence.',
      summary: { done: [], notDone: [], unknown: [] },
      findings: [],
      timeline: rows,
    });
    expect(md).toContain('\nA fuller sentence.\n');
    expect(md).toContain('| Approval requested | Approval requested: refund\\_payment on billing-mcp |');
    expect(md).toContain('| Decision (deny) | Denied by rui\\@example.test | Reason: duplicate \\| of apr\\_1 |');
    expect(md).toContain('| Grant redeemed | Grant redeemed for refund\\_payment on billing-mcp |');
    expect(md).toContain('| Outcome (completed · ok) |');
    expect(md).toContain('## Timeline (8)');
  });
});

describe('incidentSentence', () => {
  const empty = { done: [], notDone: [], unknown: [], unknownTools: [] };

  it('says where the approvals stand, by the database clock', () => {
    expect(incidentSentence(empty, [approval(), approval({ status: 'redeemed' })], at(1))).toBe(
      'No tool calls were recorded. 2 approval requests: 1 pending, 1 redeemed.',
    );
    expect(incidentSentence(empty, [approval()], at(3600))).toBe(
      'No tool calls were recorded. 1 approval request: 1 expired.',
    );
  });

  it('adds them to what was done; without approvals it is the summary’s sentence', () => {
    const summary = { ...empty, done: ['refund_payment on billing-mcp'] };
    expect(incidentSentence(summary, [approval({ status: 'redeemed' })], at(1))).toBe(
      '1 operation done. 1 approval request: 1 redeemed.',
    );
    expect(incidentSentence(summary, [], at(1))).toBe('1 operation done.');
  });
});
