// The isolation matrix (e2e/organization-isolation.spec.ts): approvals, grants, the people-only routes
// and /me.
import { expect } from '@playwright/test';
import {
  stamp,
  ORG,
  EXTRA_REF,
  NONE,
  READ_ONLY,
  NEEDS_APPROVAL,
  ABSENT_UUID,
  type Org,
  seeded,
  call,
  approvalBody,
  type Probe,
  type Row,
  redeemBody,
  items,
} from '../../testing/isolation';

export const approvalRoutes: Row[] = [
  {
    route: 'POST /api/v1/approvals',
    own: () => ({
      method: 'POST',
      path: '/api/v1/approvals',
      data: approvalBody('a', READ_ONLY, { requestRef: EXTRA_REF }),
      headers: { 'idempotency-key': `iso-own-${stamp}` },
    }),
    other: () => ({
      method: 'POST',
      path: '/api/v1/approvals',
      data: approvalBody('b', READ_ONLY, { requestRef: EXTRA_REF }),
      headers: { 'idempotency-key': `iso-other-${stamp}` },
    }),
    ownStatus: 201,
    otherStatus: 403,
    check: async (_own, other) => {
      expect(other.json()).toMatchObject({
        code: 'forbidden',
        errors: [
          { path: 'organization', message: `this API key may only request approvals for the organization "${ORG.a}"` },
        ],
      });
      const b = await call(seeded.b.key, 'GET', `/api/v1/approvals?requestRef=${seeded.b.ref}`);
      expect(items(b)).toHaveLength(2); // nothing was added under b
    },
  },
  {
    route: 'POST /api/v1/approvals (an Idempotency-Key organization b already used)',
    // Idempotency keys are per API key: another body under b's key string is a's own first request.
    own: () => ({
      method: 'POST',
      path: '/api/v1/approvals',
      data: approvalBody('a', READ_ONLY, { requestRef: EXTRA_REF, summary: 'another body' }),
      headers: { 'idempotency-key': `iso-approval-${stamp}-x` },
    }),
    other: () => ({
      method: 'POST',
      path: '/api/v1/approvals',
      data: approvalBody('a', NEEDS_APPROVAL, { requestRef: EXTRA_REF, summary: 'another body' }),
      headers: { 'idempotency-key': `iso-approval-${stamp}` },
    }),
    ownStatus: 201,
    otherStatus: 422, // 422: a's own earlier request under that key, never b's
    check: (_own, other) => {
      const detail = (other.json() as { detail: string }).detail;
      expect(detail).toContain(seeded.a.approvalId);
      expect(detail).not.toContain(seeded.b.approvalId);
    },
  },
  {
    route: 'GET /api/v1/approvals/{id}',
    own: () => ({ method: 'GET', path: `/api/v1/approvals/${seeded.a.approvalId}` }),
    other: () => ({ method: 'GET', path: `/api/v1/approvals/${seeded.b.approvalId}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/approvals/${ABSENT_UUID}` }),
    ownStatus: 200,
    otherStatus: 404,
  },
  {
    route: 'GET /api/v1/approvals/{id} (pending)',
    own: () => ({ method: 'GET', path: `/api/v1/approvals/${seeded.a.pendingId}` }),
    other: () => ({ method: 'GET', path: `/api/v1/approvals/${seeded.b.pendingId}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/approvals/${ABSENT_UUID}` }),
    ownStatus: 200,
    otherStatus: 404,
  },
  {
    route: 'GET /api/v1/approvals (the whole list and each status)',
    own: () => ({ method: 'GET', path: '/api/v1/approvals?limit=200' }),
    other: () => ({ method: 'GET', path: `/api/v1/approvals?organization=${ORG.b}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/approvals?organization=${NONE}` }),
    ownStatus: 200,
    otherStatus: 200,
    check: async (own) => {
      expect(new Set(items(own).map((i) => i.organization))).toEqual(new Set([ORG.a]));
      for (const status of ['pending', 'live', 'approved']) {
        const page = await call(seeded.a.key, 'GET', `/api/v1/approvals?status=${status}&limit=200`);
        expect(page.status).toBe(200);
        expect(items(page).length).toBeGreaterThanOrEqual(1);
        expect(new Set(items(page).map((i) => i.organization))).toEqual(new Set([ORG.a]));
      }
    },
  },
  {
    route: 'GET /api/v1/approvals?requestRef= (search)',
    own: () => ({ method: 'GET', path: `/api/v1/approvals?requestRef=${seeded.a.ref}` }),
    other: () => ({ method: 'GET', path: `/api/v1/approvals?requestRef=${seeded.b.ref}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/approvals?requestRef=${NONE}` }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own) => expect(items(own)).toHaveLength(2),
  },
  {
    route: 'POST /api/v1/grants/{grantId}/redeem',
    own: () => ({ method: 'POST', path: `/api/v1/grants/${seeded.a.grantId}/redeem`, data: redeemBody }),
    other: () => ({ method: 'POST', path: `/api/v1/grants/${seeded.b.grantId}/redeem`, data: redeemBody }),
    absent: () => ({ method: 'POST', path: `/api/v1/grants/${ABSENT_UUID}/redeem`, data: redeemBody }),
    ownStatus: 200,
    otherStatus: 404,
  },
  {
    route: 'POST /api/v1/grants/{grantId}/redeem (other server, tool and digest: still 404, never which differ)',
    own: () => ({
      method: 'POST',
      path: `/api/v1/grants/${seeded.a.spareGrantId}/redeem`,
      data: { ...redeemBody, argsDigest: `sha256:${'00'.repeat(32)}` },
    }),
    other: () => ({
      method: 'POST',
      path: `/api/v1/grants/${seeded.b.spareGrantId}/redeem`,
      data: { server: 'x-mcp', tool: 'x', argsDigest: `sha256:${'00'.repeat(32)}` },
    }),
    absent: () => ({
      method: 'POST',
      path: `/api/v1/grants/${ABSENT_UUID}/redeem`,
      data: { server: 'x-mcp', tool: 'x', argsDigest: `sha256:${'00'.repeat(32)}` },
    }),
    ownStatus: 422,
    otherStatus: 404,
  },
  {
    // Only the key that staged a request may withdraw it (a 2026 client declined the elicitation):
    // b's pending request is as absent as one that never existed, and stays pending (the last test).
    // a's own settled request says there is nothing left to withdraw.
    route: 'POST /api/v1/approvals/{id}/withdraw',
    own: () => ({
      method: 'POST',
      path: `/api/v1/approvals/${seeded.a.approvalId}/withdraw`,
      data: { reason: 'declined' },
    }),
    other: () => ({
      method: 'POST',
      path: `/api/v1/approvals/${seeded.b.pendingId}/withdraw`,
      data: { reason: 'declined' },
    }),
    absent: () => ({ method: 'POST', path: `/api/v1/approvals/${ABSENT_UUID}/withdraw`, data: { reason: 'declined' } }),
    ownStatus: 409,
    otherStatus: 404,
  },
  // People only: every key is refused alike, whatever it points at.
  ...[
    [
      'POST /api/v1/approvals/{id}/decisions',
      (o: Org) => ({
        method: 'POST' as const,
        path: `/api/v1/approvals/${seeded[o].pendingId}/decisions`,
        data: { decision: 'approve', reason: 'ok', version: 1 },
      }),
    ],
    [
      'POST /api/v1/approvals/{id}/revoke',
      (o: Org) => ({
        method: 'POST' as const,
        path: `/api/v1/approvals/${seeded[o].pendingId}/revoke`,
        data: { reason: 'no' },
      }),
    ],
    [
      'GET /api/v1/approvals/pending-count',
      () => ({ method: 'GET' as const, path: '/api/v1/approvals/pending-count' }),
    ],
    ['GET /api/v1/audit/verify', () => ({ method: 'GET' as const, path: '/api/v1/audit/verify' })],
    [
      'POST /api/v1/tools/accept',
      () => ({
        method: 'POST' as const,
        path: '/api/v1/tools/accept',
        data: {
          server: NEEDS_APPROVAL.server,
          tool: NEEDS_APPROVAL.tool.name,
          definitionHash: `sha256:${'00'.repeat(32)}`,
        },
      }),
    ],
    [
      'POST /api/v1/servers/trust',
      (o: Org) => ({ method: 'POST' as const, path: '/api/v1/servers/trust', data: { name: `iso-${o}-${stamp}` } }),
    ],
  ].map(([route, probe]): Row => ({
    route: `${route as string} (people only)`,
    own: () => (probe as (o: Org) => Probe)('a'),
    other: () => (probe as (o: Org) => Probe)('b'),
    ownStatus: 403,
    otherStatus: 403,
    check: (own, other) => expect(other.text).toBe(own.text),
  })),
  {
    route: 'GET /api/v1/me',
    own: () => ({ method: 'GET', path: '/api/v1/me' }),
    other: () => ({ method: 'GET', path: '/api/v1/me' }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own) => expect(own.json()).toMatchObject({ kind: 'api_key', organization: ORG.a }),
  },
  {
    // Public and the same for everyone: nothing of any organization in it.
    route: 'GET /api/v1/openapi.json',
    own: () => ({ method: 'GET', path: '/api/v1/openapi.json' }),
    other: () => ({ method: 'GET', path: '/api/v1/openapi.json' }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own, other) => expect(other.text).toBe(own.text),
  },
  // The tool catalog (crm-mcp's is in the demo data) and policy are the console's, not an
  // organization's: the same answer whoever asks, naming no organization.
  sameForEveryone('GET /api/v1/tools', { method: 'GET', path: '/api/v1/tools?server=crm-mcp' }),
  sameForEveryone('POST /api/v1/policy/evaluate', {
    method: 'POST',
    path: '/api/v1/policy/evaluate',
    data: { server: NEEDS_APPROVAL.server, tools: [NEEDS_APPROVAL.tool] },
  }),
];

function sameForEveryone(route: string, probe: Probe): Row {
  return {
    route,
    own: () => probe,
    other: () => probe,
    ownStatus: 200,
    otherStatus: 200,
    check: (own, other) => {
      expect(other.text).toBe(own.text);
      expect(own.text).not.toContain(ORG.a);
      expect(own.text).not.toContain(ORG.b);
    },
  };
}
