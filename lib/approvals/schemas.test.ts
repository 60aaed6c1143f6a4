import { describe, expect, it } from 'vitest';
import {
  approvalListQuerySchema,
  approvalRequestSchema,
  decisionSchema,
  decodeApprovalCursor,
  encodeApprovalCursor,
  policyRuleSchema,
  redeemSchema,
  revokeSchema,
} from './schemas';
import { describeSettled, toApprovalView, type ApprovalRow } from './view';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const body = {
  requestRef: 'req_1',
  organization: 'acme',
  principal: 'user_193',
  agent: 'support-bot',
  server: 'billing-mcp',
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
  argsDigest: DIGEST,
  summary: 'Refund 40.00 EUR on order 4411',
  resource: { type: 'order', id: '4411' },
};
const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  r.error?.issues.map((i) => i.path.join('.')) ?? [];

describe('approvalRequestSchema', () => {
  it('accepts the docs/api.md example and fills in the TTL defaults', () => {
    expect(approvalRequestSchema.parse(body)).toMatchObject({ pendingTtlSeconds: 3600, grantTtlSeconds: 900 });
  });
  it.each([
    [{ pendingTtlSeconds: 0 }, 'pendingTtlSeconds'],
    [{ pendingTtlSeconds: 86_401 }, 'pendingTtlSeconds'],
    [{ grantTtlSeconds: 86_401 }, 'grantTtlSeconds'],
    [{ grantTtlSeconds: 1.5 }, 'grantTtlSeconds'],
    [{ argsDigest: 'sha256:xyz' }, 'argsDigest'],
    [{ summary: '' }, 'summary'],
    [{ summary: 'x'.repeat(501) }, 'summary'],
    [{ principal: undefined }, 'principal'],
    [{ resource: { type: 'order' } }, 'resource.id'],
    [{ tool: { name: 'refund_payment', description: 'd'.repeat(8193) } }, 'tool.description'],
    [{ tool: { name: 'refund_payment', descripton: 'misspelt' } }, 'tool'],
  ])('refuses %j naming %s', (over, path) => {
    expect(paths(approvalRequestSchema.safeParse({ ...body, ...over }))).toContain(path);
  });
  it('takes the arguments as parsed, the very object (a __proto__ key stays a key), and the tool description', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"amount":"40.00"}') as Record<string, unknown>;
    const tool = { name: 'refund_payment', description: 'd'.repeat(8192) };
    const parsed = approvalRequestSchema.parse({ ...body, tool, arguments: args });
    expect(parsed.arguments).toBe(args);
    expect(Object.keys(parsed.arguments as object)).toEqual(['__proto__', 'amount']);
    expect(parsed.tool.description).toHaveLength(8192);
    // Absent and null alike: the data layer decides whether they were required.
    expect(approvalRequestSchema.parse({ ...body, arguments: null }).arguments).toBeNull();
    expect(approvalRequestSchema.parse(body).arguments).toBeUndefined();
  });
  it('accepts the TTL bounds', () => {
    expect(approvalRequestSchema.safeParse({ ...body, pendingTtlSeconds: 1, grantTtlSeconds: 86_400 }).success).toBe(
      true,
    );
  });
});

describe('decision, revoke and redeem bodies', () => {
  it('needs a decision, a reason of 1..1000 characters and the version seen', () => {
    expect(decisionSchema.parse({ decision: 'approve', reason: '  looks right ', version: 3 })).toEqual({
      decision: 'approve',
      reason: 'looks right',
      version: 3,
    });
    expect(paths(decisionSchema.safeParse({ decision: 'maybe', reason: '   ', version: 0 }))).toEqual([
      'decision',
      'reason',
      'version',
    ]);
    expect(paths(decisionSchema.safeParse({ decision: 'deny', reason: 'x'.repeat(1001), version: 1 }))).toEqual([
      'reason',
    ]);
    expect(paths(revokeSchema.safeParse({}))).toEqual(['reason']);
  });
  it('redeem needs server, tool and a digest', () => {
    expect(paths(redeemSchema.safeParse({ server: 'billing-mcp' }))).toEqual(['tool', 'argsDigest']);
  });
});

describe('policyRuleSchema', () => {
  it('reads a blank tool as the whole server and coerces form numbers', () => {
    expect(policyRuleSchema.parse({ server: 'billing-mcp', tool: '', requiredApprovals: '2' })).toEqual({
      server: 'billing-mcp',
      tool: null,
      requiredApprovals: 2,
    });
  });
  it('takes blocked as a requirement, and nothing else that is not a count', () => {
    expect(policyRuleSchema.parse({ server: 'fs', tool: 'write_file', requiredApprovals: 'blocked' })).toMatchObject({
      requiredApprovals: 'blocked',
    });
    for (const bad of ['Blocked', 'block', '-1', '1.5', 3])
      expect(paths(policyRuleSchema.safeParse({ server: 'fs', requiredApprovals: bad })), String(bad)).toEqual([
        'requiredApprovals',
      ]);
  });
  it('refuses 3 approvals and a "*" tool', () => {
    expect(paths(policyRuleSchema.safeParse({ server: 'billing-mcp', tool: '*', requiredApprovals: 3 }))).toEqual([
      'tool',
      'requiredApprovals',
    ]);
  });
});

describe('list query and cursor', () => {
  it('round-trips a cursor and refuses a forged one', () => {
    const cursor = {
      order: 'expires' as const,
      at: new Date('2026-11-30T12:00:00.123Z'),
      id: '00000000-0000-4000-8000-000000000001',
    };
    expect(decodeApprovalCursor(encodeApprovalCursor(cursor))).toEqual(cursor);
    expect(decodeApprovalCursor('bm9wZQ')).toBeNull();
    expect(paths(approvalListQuerySchema.safeParse({ cursor: 'bm9wZQ', status: 'maybe', color: 'red' }))).toEqual([
      'status',
      'cursor',
      '',
    ]);
  });
});

describe('toApprovalView', () => {
  const at = new Date('2026-11-30T12:00:00Z');
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
    toolDescription: null,
    annotationsTrusted: true,
    argsDigest: DIGEST,
    argumentsSent: true,
    summary: 'x',
    resourceType: null,
    resourceId: null,
    requiredApprovals: 1,
    status: 'pending',
    version: 1,
    expiresAt: at,
    grantTtlSeconds: 900,
    createdAt: at,
    decidedAt: null,
    revokedAt: null,
    revokedBy: null,
    revokeReason: null,
    grant: null,
    decisions: [],
  };
  it('reads a pending request as expired from its expiry on (the clock passed in)', () => {
    expect(toApprovalView(row, new Date(at.getTime() - 1)).status).toBe('pending');
    expect(toApprovalView(row, at).status).toBe('expired');
  });
  it('keeps an approved request approved when its grant lapses, and says so on the grant', () => {
    const grant = {
      id: 'g',
      issuedAt: at,
      expiresAt: new Date(at.getTime() + 1000),
      redeemedAt: null,
      revokedAt: null,
    };
    const view = toApprovalView({ ...row, status: 'approved', grant }, new Date(at.getTime() + 5000));
    expect(view).toMatchObject({ status: 'approved', grant: { state: 'expired' } });
  });
  it('names who decided what, and when', () => {
    const view = toApprovalView(
      { ...row, status: 'approved', decisions: [{ reviewer: 'rui@x', decision: 'approve', reason: 'ok', at }] },
      at,
    );
    expect(describeSettled(view)).toBe('Already approved: approved by rui@x at 2026-11-30T12:00:00.000Z.');
  });
});
