// An in-process stand-in for Countersign's approvals, grants and outcomes API (API.md), for the
// integration tests of lib/mcp: the wrapper takes it as its `fetch`. The real server is exercised
// by e2e/agent-integration.spec.ts; this one lets the tests decide and count everything.
import { randomUUID } from 'node:crypto';
import { outcomeBatchSchema, type Outcome } from '@/lib/outcomes/schemas';

export type Decision = 'approve' | 'deny' | 'never';

export interface FakeApproval {
  id: string;
  idempotencyKey: string;
  body: { server: string; tool: { name: string }; argsDigest: string; principal: string };
  status: 'pending' | 'approved' | 'denied' | 'redeemed';
  grantId: string | null;
  redemptions: number;
}

export function fakeCountersign(options: { decide?: (approval: FakeApproval) => Decision } = {}) {
  const outcomes: Outcome[] = [];
  const approvals = new Map<string, FakeApproval>();
  const byKey = new Map<string, FakeApproval>();
  let down = false;

  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const view = (a: FakeApproval) => ({
    id: a.id,
    status: a.status,
    requiredApprovals: 1,
    version: 1,
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    grant: a.grantId
      ? { id: a.grantId, redeemedAt: a.status === 'redeemed' ? new Date().toISOString() : null, revokedAt: null }
      : null,
  });

  const fetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (down)
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    const url = new URL(input);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : null;
    const headers = new Headers(init?.headers);
    if (!headers.get('authorization')?.startsWith('Bearer ')) return json(401, { code: 'unauthenticated' });

    if (method === 'POST' && url.pathname === '/api/v1/outcomes') {
      const parsed = outcomeBatchSchema.safeParse(body);
      if (!parsed.success)
        return json(422, {
          code: 'invalid_input',
          errors: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
        });
      outcomes.push(...parsed.data.records);
      return json(200, { accepted: parsed.data.records.length, duplicates: 0, records: [] });
    }
    if (method === 'POST' && url.pathname === '/api/v1/approvals') {
      const key = headers.get('idempotency-key');
      if (!key) return json(400, { code: 'idempotency_key_required' });
      const existing = byKey.get(key);
      if (existing) return json(201, view(existing));
      const approval: FakeApproval = {
        id: randomUUID(),
        idempotencyKey: key,
        body,
        status: 'pending',
        grantId: null,
        redemptions: 0,
      };
      approvals.set(approval.id, approval);
      byKey.set(key, approval);
      return json(201, view(approval));
    }
    const get = /^\/api\/v1\/approvals\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && get) {
      const approval = approvals.get(get[1]);
      if (!approval) return json(404, { code: 'not_found' });
      // People decide between the request and the first poll.
      if (approval.status === 'pending') {
        const decision = options.decide?.(approval) ?? 'approve';
        if (decision === 'approve') Object.assign(approval, { status: 'approved', grantId: randomUUID() });
        if (decision === 'deny') approval.status = 'denied';
      }
      return json(200, view(approval));
    }
    const redeem = /^\/api\/v1\/grants\/([^/]+)\/redeem$/.exec(url.pathname);
    if (method === 'POST' && redeem) {
      const approval = [...approvals.values()].find((a) => a.grantId === redeem[1]);
      if (!approval) return json(404, { code: 'not_found' });
      if (approval.status === 'redeemed') return json(409, { code: 'conflict' });
      if (
        approval.body.argsDigest !== body.argsDigest ||
        approval.body.tool.name !== body.tool ||
        approval.body.server !== body.server
      ) {
        return json(422, { code: 'invalid_input' });
      }
      approval.status = 'redeemed';
      approval.redemptions++;
      return json(200, { grantId: approval.grantId, approvalId: approval.id });
    }
    return json(404, { code: 'not_found' });
  };

  return {
    fetch,
    outcomes,
    approvals,
    setDown(value: boolean) {
      down = value;
    },
  };
}
