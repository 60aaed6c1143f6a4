import { describe, expect, it } from 'vitest';
import { explainLostDecision, relativeTime, riskOf, settledAt } from './present';
import type { ApprovalView } from './view';

describe('riskOf', () => {
  it.each([
    [{ readOnlyHint: true, openWorldHint: false }, true, 'low'],
    [{ readOnlyHint: false, destructiveHint: false, openWorldHint: true }, true, 'medium'],
    [{ readOnlyHint: false, destructiveHint: true, openWorldHint: true }, true, 'high'],
    [null, true, 'high'],
    // An untrusted server's hints never lower the risk.
    [{ readOnlyHint: true, destructiveHint: false, openWorldHint: false }, false, 'high'],
  ] as const)('%j trusted=%s → %s', (annotations, trusted, level) => {
    expect(riskOf(annotations, trusted).level).toBe(level);
  });

  it('says when hints were ignored', () => {
    expect(riskOf({ readOnlyHint: true }, false).traits).toContain('untrusted server: hints ignored');
    expect(riskOf({ readOnlyHint: true }, true).traits).not.toContain('untrusted server: hints ignored');
  });
});

describe('relativeTime', () => {
  const now = Date.UTC(2026, 10, 30, 12);
  it.each([
    [now + 30_000, 'in under a minute'],
    [now + 12 * 60_000, 'in 12 min'],
    [now + 125 * 60_000, 'in 2 h 5 min'],
    [now - 3 * 60_000, '3 min ago'],
  ])('%s → %s', (t, text) => expect(relativeTime(new Date(t), now)).toBe(text));
});

const at = (s: string) => new Date(`2026-12-01T${s}Z`);
const base: ApprovalView = {
  id: 'a',
  status: 'pending',
  requiredApprovals: 2,
  decisions: [],
  version: 1,
  expiresAt: at('12:00:00'),
  grant: null,
  requestRef: 'req_1',
  idempotencyKey: 'k',
  organization: 'acme',
  principal: 'user_193',
  agent: null,
  server: 's',
  tool: { name: 't', annotations: null, description: null },
  annotationsTrusted: true,
  argsDigest: 'sha256:00',
  argumentsSent: true,
  arguments: null,
  argumentsNote: 'reviewers only',
  argumentsPreview: null,
  summary: 'x',
  resource: null,
  grantTtlSeconds: 900,
  createdAt: at('10:00:00'),
  decidedAt: null,
  revoked: null,
};
const when = (d: Date) => `<${d.toISOString().slice(11, 19)}>`;

describe('settledAt (the history’s “Decided”)', () => {
  it.each([
    ['pending', {}, null],
    ['approved', { decidedAt: at('11:00:00') }, at('11:00:00')],
    ['denied', { decidedAt: at('11:05:00') }, at('11:05:00')],
    ['expired', {}, at('12:00:00')],
    ['revoked', { revoked: { at: at('11:30:00'), by: 'admin@x', reason: 'r' } }, at('11:30:00')],
  ] as const)('%s', (status, over, expected) => {
    expect(settledAt({ ...base, status, ...over })).toEqual(expected);
  });
});

describe('explainLostDecision', () => {
  const deny = { reviewer: 'rita@x', decision: 'deny' as const, reason: 'Wrong order', at: at('11:01:02') };
  const yes = { reviewer: 'rita@x', decision: 'approve' as const, reason: 'ok', at: at('11:01:02') };
  it.each([
    [
      { status: 'denied', decisions: [deny] },
      'Someone else decided this request while you were reading it: rita@x denied it at <11:01:02> (“Wrong order”). Your decision was not recorded.',
    ],
    [
      { status: 'approved', decisions: [yes], decidedAt: at('11:01:02') },
      'Someone else decided this request while you were reading it: rita@x approved it at <11:01:02>. Your decision was not recorded.',
    ],
    [
      { status: 'pending', decisions: [yes], version: 2 },
      'While you were reading, rita@x approved this request (1 of 2 approvals now). Your reason is kept: check the request and decide again.',
    ],
    [{ status: 'expired' }, 'This request expired at <12:00:00>, before your decision arrived. Nothing was recorded.'],
    [
      { status: 'pending', decisions: [{ ...yes, reviewer: 'me@x' }] },
      'You already approved this request at <11:01:02>.',
    ],
  ] as const)('%o', (over, expected) => {
    const text = explainLostDecision({ ...base, ...over } as ApprovalView, 'me@x', when);
    expect(text).toBe(expected);
    expect(text).not.toMatch(/version|\dT\d/);
  });
});
