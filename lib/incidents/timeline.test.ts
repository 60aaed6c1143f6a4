import { describe, expect, it } from 'vitest';
import {
  approvedTwice,
  atSeconds as at,
  incidentApproval as approval,
  incidentGrant as grant,
  story,
} from '../../testing/incident-records';
import { approvalEntries, buildTimeline } from './timeline';

const kinds = (entries: { kind: string }[]) => entries.map((e) => e.kind);
const NOW = at(100_000);

describe('approvalEntries', () => {
  it('a request approved by two reviewers, its grant issued by the second and redeemed', () => {
    const entries = approvalEntries(approvedTwice, NOW);
    expect(kinds(entries)).toEqual(['approval_requested', 'decision', 'decision', 'grant_issued', 'grant_redeemed']);
    expect(entries[0]).toMatchObject({
      at: at(0),
      approvalId: 'apr_1',
      requestedBy: 'API key "gateway"',
      principal: 'user_193',
      agent: 'support-bot',
      tool: 'refund_payment',
      server: 'billing-mcp',
      summary: 'Refund 40.00 EUR on order 4411',
      requiredApprovals: 2,
      title: 'Approval requested: refund_payment on billing-mcp',
      detail:
        'API key "gateway" asks on behalf of user_193 (agent support-bot): Refund 40.00 EUR on order 4411. Needs 2 approvals.',
    });
    expect(entries.slice(1, 3)).toMatchObject([
      {
        reviewer: 'rui@example.test',
        decision: 'approve',
        reason: 'order checked',
        title: 'Approved by rui@example.test',
      },
      { reviewer: 'rita@example.test', decision: 'approve', reason: 'second look' },
    ]);
    expect(entries[3]).toMatchObject({
      kind: 'grant_issued',
      grantId: 'grt_1',
      issuedBy: 'rita@example.test',
      expiresAt: at(920),
    });
    expect(entries[4]).toMatchObject({
      kind: 'grant_redeemed',
      at: at(30),
      grantId: 'grt_1',
      redeemedBy: 'API key "executor"',
    });
  });

  it('a request that needed no approval: policy issues the grant', () => {
    const entries = approvalEntries(
      approval({ status: 'approved', requiredApprovals: 0, grant: grant({ issuedAt: at(0) }) }),
      at(10),
    );
    expect(kinds(entries)).toEqual(['approval_requested', 'grant_issued']);
    expect(entries[0].detail).toContain('Needs no approval under policy.');
    expect(entries[1]).toMatchObject({ issuedBy: 'policy (no approval required)' });
  });

  it('a denial shows the reviewer and reason; no grant follows', () => {
    const entries = approvalEntries(
      approval({
        status: 'denied',
        decisions: [{ reviewer: 'rui@example.test', decision: 'deny', reason: 'wrong amount', at: at(5) }],
      }),
      NOW,
    );
    expect(kinds(entries)).toEqual(['approval_requested', 'decision']);
    expect(entries[1]).toMatchObject({
      decision: 'deny',
      reason: 'wrong amount',
      title: 'Denied by rui@example.test',
      detail: 'wrong amount',
    });
  });

  it('a pending request expires by the given clock, not before', () => {
    const pending = approval({
      decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'ok', at: at(5) }],
    });
    expect(kinds(approvalEntries(pending, at(3599)))).toEqual(['approval_requested', 'decision']);
    const expired = approvalEntries(pending, at(3600));
    expect(kinds(expired)).toEqual(['approval_requested', 'decision', 'expired']);
    expect(expired[2]).toMatchObject({
      at: at(3600),
      what: 'request',
      grantId: null,
      detail: 'Expired with 1 of 2 approvals.',
    });
    // The sweep's stored status says the same.
    expect(kinds(approvalEntries(approval({ status: 'expired' }), at(0)))).toEqual(['approval_requested', 'expired']);
  });

  it('a grant left unused expires; a redeemed or revoked one does not', () => {
    const unused = approvalEntries(approval({ status: 'approved', requiredApprovals: 0, grant: grant() }), at(920));
    expect(kinds(unused)).toEqual(['approval_requested', 'grant_issued', 'expired']);
    expect(unused[2]).toMatchObject({
      at: at(920),
      what: 'grant',
      grantId: 'grt_1',
      title: 'Grant expired unused: refund_payment on billing-mcp',
    });
    expect(kinds(approvalEntries(approvedTwice, NOW))).not.toContain('expired');
  });

  it('revocation of a pending request and of an unused grant, with who and why', () => {
    const pending = approvalEntries(
      approval({ status: 'revoked', revoked: { at: at(50), by: 'ada@example.test', reason: 'customer withdrew' } }),
      NOW,
    );
    expect(kinds(pending)).toEqual(['approval_requested', 'revoked']);
    expect(pending[1]).toMatchObject({
      revokedBy: 'ada@example.test',
      reason: 'customer withdrew',
      grantId: null,
      title: 'Approval request revoked by ada@example.test',
    });
    const ofGrant = approvalEntries(
      approval({
        status: 'revoked',
        requiredApprovals: 0,
        grant: grant({ issuedAt: at(0), revokedAt: at(60) }),
        revoked: { at: at(60), by: 'ada@example.test', reason: 'wrong order' },
      }),
      NOW,
    );
    expect(kinds(ofGrant)).toEqual(['approval_requested', 'grant_issued', 'revoked']);
    expect(ofGrant[2]).toMatchObject({ grantId: 'grt_1', title: 'Grant revoked by ada@example.test' });
  });
});

describe('buildTimeline', () => {
  it('merges records and approval steps by time; a record made with a grant links its approval', () => {
    const records = story(
      { obs: 'approvalRequired', at: -5 },
      { obs: 'ok', at: 30, grant: 'grt_1' },
      { obs: 'ok', at: 31, tool: 'get_order', read: true, grant: 'grt_other' },
    );
    const timeline = buildTimeline(records, [approvedTwice], NOW);
    expect(timeline.map((e) => (e.kind === 'outcome' ? `outcome:${e.recordId}` : e.kind))).toEqual([
      'outcome:a',
      'approval_requested',
      'decision',
      'decision',
      'grant_issued',
      // Equal times: the redemption comes before the call it allowed.
      'grant_redeemed',
      'outcome:b',
      'outcome:c',
    ]);
    const linked = timeline.filter((e) => e.kind === 'outcome').map((e) => [e.recordId, e.approvalId]);
    expect(linked).toEqual([
      ['a', null],
      ['b', 'apr_1'],
      ['c', null],
    ]);
  });

  it('keeps the records’ own order when their times are equal', () => {
    const records = story({ obs: 'timeout', at: 1, seq: 0 }, { obs: 'ok', at: 1, seq: 1 });
    expect(buildTimeline(records, [], NOW).map((e) => e.kind === 'outcome' && e.recordId)).toEqual(['a', 'b']);
  });

  it('holds approvals only, without any record', () => {
    expect(kinds(buildTimeline([], [approval()], at(1)))).toEqual(['approval_requested']);
  });
});

describe('buildTimeline when clocks disagree', () => {
  it('keeps causes before effects within an approval, and a call after the redemption it used', () => {
    const skewed = approval({
      status: 'redeemed',
      requiredApprovals: 1,
      // The app stamped the decision 3 ms after the database issued the grant it caused.
      decisions: [{ reviewer: 'rui@example.test', decision: 'approve', reason: 'ok', at: at(10.003) }],
      grant: grant({ issuedAt: at(10), redeemedAt: at(10.002), redeemedBy: 'API key "executor"' }),
    });
    // The caller's clock puts its call 1 s before the redemption; an unrelated record sits between.
    const records = story({ obs: 'ok', at: 9.5, tool: 'get_order', read: true }, { obs: 'ok', at: 9, grant: 'grt_1' });
    const timeline = buildTimeline([records[1], records[0]], [skewed], NOW);
    expect(timeline.map((e) => (e.kind === 'outcome' ? `outcome:${e.recordId}` : e.kind))).toEqual([
      'approval_requested',
      'outcome:a',
      'decision',
      'grant_issued',
      'grant_redeemed',
      'outcome:b',
    ]);
    // Each entry keeps the time it was recorded with.
    expect(timeline[3].at).toEqual(at(10));
    expect(timeline[5].at).toEqual(at(9));
  });
});
