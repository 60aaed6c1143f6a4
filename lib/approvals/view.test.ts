import { describe, expect, it } from 'vitest';
import { argumentsAbsence, toApprovalView, type ApprovalRow } from './view';

// Why a reader is not shown a request's arguments (docs/api.md "Approvals and grants",
// `argumentsNote`), state by state, the expected sentences written out by hand.
const at = (s: string) => new Date(`2026-12-01T${s}Z`);
const NOW = at('12:00:00');
const row: ApprovalRow = {
  id: 'a',
  requestRef: 'r',
  idempotencyKey: 'k',
  organization: 'acme',
  principal: 'p',
  agent: null,
  server: 's',
  toolName: 't',
  toolAnnotations: null,
  toolDescription: 'Refunds a payment',
  annotationsTrusted: true,
  argsDigest: 'sha256:00',
  argumentsSent: true,
  summary: 'x',
  resourceType: null,
  resourceId: null,
  requiredApprovals: 1,
  status: 'pending',
  version: 1,
  expiresAt: at('13:00:00'),
  grantTtlSeconds: 900,
  createdAt: at('10:00:00'),
  decidedAt: null,
  revokedAt: null,
  revokedBy: null,
  revokeReason: null,
  grant: null,
  decisions: [],
};
const grant = (over: Partial<NonNullable<ApprovalRow['grant']>> = {}) => ({
  id: 'g',
  issuedAt: at('11:00:00'),
  expiresAt: at('11:15:00'),
  redeemedAt: null,
  revokedAt: null,
  ...over,
});
const view = (over: Partial<ApprovalRow>) => toApprovalView({ ...row, ...over }, NOW);

describe('argumentsAbsence', () => {
  it.each([
    ['pending', {}, null],
    ['approved, its grant live', { status: 'approved', grant: grant({ expiresAt: at('12:10:00') }) }, null],
    ['denied', { status: 'denied', decidedAt: at('11:05:00') }, 'erased when denied at 2026-12-01T11:05:00.000Z'],
    [
      'expired (stored)',
      { status: 'expired', expiresAt: at('11:30:00') },
      'erased when it expired at 2026-12-01T11:30:00.000Z',
    ],
    [
      'pending past its expiry, not yet swept',
      { expiresAt: at('11:59:59') },
      'erased when it expired at 2026-12-01T11:59:59.000Z',
    ],
    [
      'revoked',
      { status: 'revoked', revokedAt: at('11:40:00'), revokedBy: 'admin@x', revokeReason: 'no' },
      'erased when revoked at 2026-12-01T11:40:00.000Z',
    ],
    [
      'redeemed',
      { status: 'redeemed', grant: grant({ redeemedAt: at('11:10:00') }) },
      'erased when its grant was redeemed at 2026-12-01T11:10:00.000Z',
    ],
    [
      'approved, its grant lapsed unused',
      { status: 'approved', grant: grant() },
      'erased when its grant expired at 2026-12-01T11:15:00.000Z',
    ],
    ['never sent', { argumentsSent: false }, 'not sent by the agent'],
    ['never sent, since denied', { argumentsSent: false, status: 'denied' }, 'not sent by the agent'],
  ] as const)('%s, to a reviewer: %s', (_, over, note) => {
    expect(argumentsAbsence(view(over as Partial<ApprovalRow>), true)).toBe(note);
  });

  it('an open request tells anyone else "reviewers only"; an ended one, to everyone, why they are gone', () => {
    expect(argumentsAbsence(view({}), false)).toBe('reviewers only');
    expect(argumentsAbsence(view({ status: 'denied', decidedAt: at('11:05:00') }), false)).toBe(
      'erased when denied at 2026-12-01T11:05:00.000Z',
    );
  });
});

describe('toApprovalView', () => {
  it('never carries arguments itself: null, with the note anyone but a reviewer gets; the description as stored', () => {
    expect(view({})).toMatchObject({
      arguments: null,
      argumentsNote: 'reviewers only',
      argumentsPreview: null,
      argumentsSent: true,
      tool: { name: 't', annotations: null, description: 'Refunds a payment' },
    });
  });
});
