import { describe, expect, it } from 'vitest';
import { classifyRecord } from '@/lib/outcomes/classify';
import type { OutcomeView } from '@/lib/server/outcomes';
import { DEMO_TRUSTED_SERVERS, demoOutcomes } from '@/scripts/demo-outcomes';
import { tally } from './finding-wording';
import { detectFindings } from './findings';
import { story } from '../../testing/incident-records';
import type { IncidentRecord } from './types';

// A stored record read back is an IncidentRecord once the caller adds its receipt order.
const _fromView = (view: OutcomeView, seq: number): IncidentRecord => ({ ...view, seq });

describe('detectFindings', () => {
  it('returns findings in time order, whatever the input order', () => {
    const records = story(
      { obs: 'timeout', key: 'k1' },
      { obs: 'ok', key: 'k2' },
      { obs: 'forbidden', tool: 'x' },
      { obs: 'ok', tool: 'y', read: true, trusted: false },
    );
    const forward = detectFindings(records);
    expect(detectFindings([...records].reverse())).toEqual(forward);
    expect(forward.map((f) => [f.kind, f.recordIds])).toEqual([
      ['unsafe_replay', ['a', 'b']],
      ['write_without_grant', ['b']],
      ['permission_expansion', ['c', 'd']],
      ['write_without_grant', ['d']],
    ]);
  });

  it('finds nothing in nothing', () => {
    expect(detectFindings([])).toEqual([]);
  });

  it('tallies repeated phrases', () => {
    expect(tally(['a', 'b', 'a', 'c', 'a'])).toBe('a 3 times, b and c');
    expect(tally(['x'])).toBe('x');
  });
});

describe('the demo stories', () => {
  const trusted = new Set(DEMO_TRUSTED_SERVERS);
  const records: IncidentRecord[] = demoOutcomes(Date.parse('2026-11-30T12:00:00Z'), 0).map((o, seq) => ({
    ...o,
    id: o.eventId,
    seq,
    occurredAt: new Date(o.occurredAt),
    classification: classifyRecord(o, trusted.has(o.server)),
  }));
  const findings = detectFindings(records);
  const kindsOf = (ref: string) =>
    [
      ...new Set(findings.filter((f) => f.recordIds.every((id) => id.startsWith(`demo_${ref}_`))).map((f) => f.kind)),
    ].sort();

  it.each([
    ['req_refund_4411', ['write_without_grant']],
    ['req_refund_5120', ['unsafe_replay', 'write_without_grant']],
    ['req_scope_7781', ['permission_expansion', 'write_without_grant']],
    ['req_token_3302', []],
    ['req_session_9001', []],
    ['req_busy_6610', ['unbounded_retry']],
    ['req_outage_8120', []],
    ['req_protocol_1000', ['retried_non_retryable']],
    ['req_args_2231', []],
    ['req_elicit_4020', []],
    ['req_cancel_3390', []],
    // The refund was refused, then the agent changed orders on another server.
    ['req_toolerrors_5555', ['permission_expansion', 'retried_non_retryable']],
    ['req_schema_6001', []],
    // The refund waited for approval; the agent tried to cancel the order on another server.
    ['req_blocked_7002', ['permission_expansion']],
    ['req_silent_8003', []],
    // crm-mcp is untrusted: its "read-only" lookup counts as a write.
    ['req_crm_9100', ['write_without_grant']],
    ['req_readonly_9200', []],
  ])('%s raises %j', (ref, kinds) => {
    expect(kindsOf(ref)).toEqual(kinds);
  });

  it('req_refund_5120 names both keys', () => {
    const f = findings.find((x) => x.kind === 'unsafe_replay' && x.recordIds[0].startsWith('demo_req_refund_5120_'));
    expect(f?.recordIds).toEqual(['demo_req_refund_5120_0', 'demo_req_refund_5120_1']);
    expect(f?.explanation).toContain('refund-5120-v1');
    expect(f?.explanation).toContain('refund-5120-retry');
  });

  it('every finding stays within one request reference', () => {
    for (const f of findings) {
      const refs = new Set(f.recordIds.map((id) => records.find((r) => r.id === id)!.requestRef));
      expect(refs.size).toBe(1);
    }
  });
});
