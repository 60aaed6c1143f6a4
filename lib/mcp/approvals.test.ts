import { describe, expect, it } from 'vitest';
import { obtainGrant, type ApprovalRequestBody, type ApprovalSnapshot } from './approvals';

const BODY: ApprovalRequestBody = {
  requestRef: 'req_1',
  organization: 'acme',
  principal: 'user_193',
  server: 'billing-mcp',
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false } },
  // sha256sum of the canonical JSON of `arguments` below, computed by hand.
  argsDigest: 'sha256:c14a2d971e37fed9301f3b251d14abd8c8c7a2d12ba07c4915dca7c6a62fbb7a',
  arguments: { order_id: '4411', amount: '40.00', currency: 'EUR' },
  summary: 'Refund 40.00 EUR',
};
const snapshot = (
  status: ApprovalSnapshot['status'],
  grant = status === 'approved' || status === 'redeemed',
): ApprovalSnapshot => ({
  id: 'a1',
  status,
  requiredApprovals: 1,
  version: 1,
  expiresAt: '2026-11-30T13:00:00Z',
  grant: grant ? { id: 'g1' } : null,
});

type Step = { status: number; body?: unknown } | 'network';

/** Answers each route from its own script; the last answer repeats. Records every request. */
function api(routes: { create?: Step[]; read?: Step[]; redeem?: Step[] }) {
  const requests: { method: string; path: string; key: string | null; body: unknown }[] = [];
  const fetch = async (input: string | URL, init?: RequestInit) => {
    const path = new URL(input).pathname;
    requests.push({
      method: init?.method ?? 'GET',
      path,
      key: new Headers(init?.headers).get('idempotency-key'),
      body: init?.body ? JSON.parse(String(init.body)) : null,
    });
    const script = path.endsWith('/redeem') ? routes.redeem : init?.method === 'POST' ? routes.create : routes.read;
    const step = (script && (script.length > 1 ? script.shift() : script[0])) ?? { status: 500 };
    if (step === 'network') throw new TypeError('fetch failed');
    return new Response(JSON.stringify(step.body ?? {}), { status: step.status });
  };
  return { fetch, requests };
}

const endpoint = (fetch: ReturnType<typeof api>['fetch']) => ({
  url: 'http://countersign.test',
  apiKey: 'cs_live_x',
  fetch,
});
const fast = { pollInitialMs: 1, pollMaxMs: 2, random: () => 0 };

describe('obtainGrant', () => {
  it('requests with the Idempotency-Key, waits for the decision, redeems the grant for the same call', async () => {
    const a = api({
      create: [{ status: 201, body: snapshot('pending') }],
      read: [
        { status: 200, body: snapshot('pending') },
        { status: 200, body: snapshot('approved') },
      ],
      redeem: [{ status: 200 }],
    });
    const notified: ApprovalSnapshot[] = [];
    const out = await obtainGrant(
      endpoint(a.fetch),
      { body: BODY, idempotencyKey: 'cs-key' },
      { ...fast, onRequested: (s) => void notified.push(s) },
    );
    expect(out).toEqual({ ok: true, approvalId: 'a1', grantId: 'g1' });
    expect(notified).toHaveLength(1);
    expect(a.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/approvals', key: 'cs-key', body: BODY });
    // The arguments go as given, beside their digest.
    expect((a.requests[0].body as ApprovalRequestBody).arguments).toEqual({
      order_id: '4411',
      amount: '40.00',
      currency: 'EUR',
    });
    expect(a.requests.at(-1)).toEqual({
      method: 'POST',
      path: '/api/v1/grants/g1/redeem',
      key: null,
      body: { server: 'billing-mcp', tool: 'refund_payment', argsDigest: BODY.argsDigest },
    });
  });

  it('an approval policy grants at once (201 approved): redeems without waiting', async () => {
    const a = api({ create: [{ status: 201, body: snapshot('approved') }], redeem: [{ status: 200 }] });
    expect(await obtainGrant(endpoint(a.fetch), { body: BODY, idempotencyKey: 'k' }, fast)).toMatchObject({ ok: true });
    expect(a.requests.map((r) => r.method + ' ' + r.path)).toEqual([
      'POST /api/v1/approvals',
      'POST /api/v1/grants/g1/redeem',
    ]);
  });

  it('retries a lost or in-flight request with the same key', async () => {
    const a = api({
      create: ['network', { status: 409 }, { status: 503 }, { status: 201, body: snapshot('approved') }],
      redeem: [{ status: 200 }],
    });
    expect(await obtainGrant(endpoint(a.fetch), { body: BODY, idempotencyKey: 'k' }, fast)).toMatchObject({ ok: true });
    expect(a.requests.filter((r) => r.path === '/api/v1/approvals').map((r) => r.key)).toEqual(['k', 'k', 'k', 'k']);
  });

  it.each([
    ['denied', snapshot('denied'), 'denied_by_policy'],
    ['expired', snapshot('expired'), 'approval_required'],
    ['revoked', snapshot('revoked'), 'approval_required'],
    ['already redeemed (a replayed key)', snapshot('redeemed'), 'approval_required'],
  ] as const)('%s: blocked, nothing redeemed', async (_name, decided, block) => {
    const a = api({ create: [{ status: 201, body: snapshot('pending') }], read: [{ status: 200, body: decided }] });
    const out = await obtainGrant(endpoint(a.fetch), { body: BODY, idempotencyKey: 'k' }, fast);
    expect(out).toMatchObject({ ok: false, block, approvalId: 'a1' });
    expect(a.requests.some((r) => r.path.endsWith('/redeem'))).toBe(false);
  });

  it.each([409, 410, 422])('a grant the server will not redeem (%i): blocked', async (status) => {
    const a = api({ create: [{ status: 201, body: snapshot('approved') }], redeem: [{ status }] });
    expect(await obtainGrant(endpoint(a.fetch), { body: BODY, idempotencyKey: 'k' }, fast)).toMatchObject({
      ok: false,
      block: 'approval_required',
    });
  });

  it('no decision within the wait limit, or Countersign unreachable: blocked', async () => {
    const waiting = api({
      create: [{ status: 201, body: snapshot('pending') }],
      read: [{ status: 200, body: snapshot('pending') }],
    });
    expect(
      await obtainGrant(endpoint(waiting.fetch), { body: BODY, idempotencyKey: 'k' }, { ...fast, maxWaitMs: 30 }),
    ).toMatchObject({ ok: false, block: 'approval_required', reason: 'no decision within the wait limit' });
    const down = api({ create: ['network'] });
    expect(await obtainGrant(endpoint(down.fetch), { body: BODY, idempotencyKey: 'k' }, fast)).toMatchObject({
      ok: false,
      block: 'approval_required',
      approvalId: null,
    });
    const refused = api({ create: [{ status: 403, body: { code: 'forbidden' } }] });
    expect(await obtainGrant(endpoint(refused.fetch), { body: BODY, idempotencyKey: 'k' }, fast)).toMatchObject({
      ok: false,
      reason: 'the approval request failed (HTTP 403 forbidden)',
    });
  });

  it('cancelled while waiting: blocked and marked cancelled', async () => {
    const a = api({
      create: [{ status: 201, body: snapshot('pending') }],
      read: [{ status: 200, body: snapshot('pending') }],
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect(
      await obtainGrant(
        endpoint(a.fetch),
        { body: BODY, idempotencyKey: 'k' },
        { ...fast, pollInitialMs: 5 },
        controller.signal,
      ),
    ).toMatchObject({ ok: false, cancelled: true });
  });
});
