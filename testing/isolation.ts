// Shared set-up of the organization isolation spec (e2e/organization-isolation.spec.ts): two
// organizations' keys and data seeded through the API, the calls the matrix makes, and what
// organization b's data would give away.
import { expect, test, type APIRequestContext } from '@playwright/test';
import { cli, secretFrom, users } from './e2e';
import { expectAsDocumented } from './api-contract';

export const stamp = Date.now().toString(36);
export const ORG = { a: `iso-a-${stamp}`, b: `iso-b-${stamp}` };
export const SHARED_REF = `iso-shared-${stamp}`; // both organizations record under this reference
export const EXTRA_REF = `iso-extra-${stamp}`; // where the matrix's own writes go, apart from the seeded references
export const NONE = `iso-none-${stamp}`; // a name nothing is recorded under
// The approvals' arguments (a look-up of order 4411), and their digest, which the records carry
// too: `sha256:` + sha256sum of {"order_id":"4411"}, written out by hand.
export const ARGS = { order_id: '4411' };
export const DIGEST = 'sha256:93f6a87ee5fd7511c59fd49b24a17e354e4ef073323317084287daebdf3801f6';
export const READ_ONLY = { server: 'orders-mcp', tool: { name: 'get_order', annotations: { readOnlyHint: true } } }; // approved at once (demo data)
export const NEEDS_APPROVAL = {
  server: 'billing-mcp',
  tool: { name: 'add_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
};
export const ABSENT_UUID = '00000000-0000-4000-8000-000000000000';

export type Org = keyof typeof ORG;
export type Seeded = {
  key: string;
  outcomeId: string;
  sharedOutcomeId: string;
  grantOutcomeId: string;
  eventId: string;
  idempotencyKey: string;
  ref: string;
  approvalId: string;
  pendingId: string;
  grantId: string;
  spareGrantId: string;
  approvalIdempotencyKey: string;
};
export const seeded = {} as Record<Org, Seeded>;
export let unlimitedKey = '';
export let adminToken = '';
export let api: APIRequestContext;

export type Answer = { status: number; text: string; json: () => unknown };
export async function call(
  secret: string,
  method: 'GET' | 'POST',
  path: string,
  data?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await api.fetch(path, { method, data, headers: { authorization: `Bearer ${secret}`, ...headers } });
  await expectAsDocumented(method, res);
  const text = await res.text();
  return { status: res.status(), text, json: () => JSON.parse(text) };
}

export const record = (org: Org, over: Record<string, unknown> = {}) => ({
  eventId: `evt-${org}-${stamp}-${Math.random().toString(36).slice(2, 8)}`,
  occurredAt: '2026-11-30T12:00:00Z',
  requestRef: `iso-ref-${org}-${stamp}`,
  idempotencyKey: `iso-idem-${org}-${stamp}`,
  organization: ORG[org],
  principal: `principal-${org}`,
  server: 'billing-mcp',
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
  argsDigest: DIGEST,
  summary: `Marker ${org} ${stamp}: refund on order 4411`,
  observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
  ...over,
});

export const approvalBody = (
  org: Org,
  shape: typeof READ_ONLY | typeof NEEDS_APPROVAL,
  over: Record<string, unknown> = {},
) => ({
  requestRef: `iso-ref-${org}-${stamp}`,
  organization: ORG[org],
  principal: `principal-${org}`,
  agent: 'iso-bot',
  ...shape,
  arguments: ARGS,
  argsDigest: DIGEST,
  summary: `Marker ${org} ${stamp}: approval`,
  ...over,
});

export async function ok<T>(answer: Promise<Answer>, status = 200): Promise<T> {
  const a = await answer;
  expect(a.status, a.text).toBe(status);
  return a.json() as T;
}

export function setUpIsolation() {
  test.beforeAll(async ({ playwright }, testInfo) => {
    test.setTimeout(120_000);
    api = await playwright.request.newContext({ baseURL: testInfo.project.use.baseURL });
    const scopes = 'outcomes:write,outcomes:read,approvals:request,grants:redeem';
    unlimitedKey = secretFrom(cli('apikeys:create', '--name', `e2e-iso-all-${stamp}`, '--scopes', scopes), 'cs_live_');
    adminToken = secretFrom(
      cli('tokens:create', '--email', users.admin.email, '--name', `e2e-iso-${stamp}`),
      'cs_pat_',
    );
    for (const org of ['a', 'b'] as const) {
      const key = secretFrom(
        cli('apikeys:create', '--name', `e2e-iso-${org}-${stamp}`, '--scopes', scopes, '--organization', ORG[org]),
        'cs_live_',
      );
      const own = record(org);
      const shared = record(org, { requestRef: SHARED_REF, idempotencyKey: undefined });
      const ingested = await ok<{ records: { id: string }[] }>(
        call(key, 'POST', '/api/v1/outcomes', { records: [own, shared] }),
      );
      const approvalIdempotencyKey = `iso-approval-${stamp}`; // the same key string for both organizations
      const approved = await ok<{ id: string; grant: { id: string } }>(
        call(key, 'POST', '/api/v1/approvals', approvalBody(org, READ_ONLY), {
          'idempotency-key': approvalIdempotencyKey,
        }),
        201,
      );
      const spare = await ok<{ grant: { id: string } }>(
        call(key, 'POST', '/api/v1/approvals', approvalBody(org, READ_ONLY, { requestRef: SHARED_REF }), {
          'idempotency-key': `iso-spare-${org}-${stamp}`,
        }),
        201,
      );
      const withGrant = record(org, { grantId: approved.grant.id });
      const grantRecord = await ok<{ records: { id: string }[] }>(
        call(key, 'POST', '/api/v1/outcomes', { records: [withGrant] }),
      );
      const pending = await ok<{ id: string; status: string }>(
        call(key, 'POST', '/api/v1/approvals', approvalBody(org, NEEDS_APPROVAL), {
          'idempotency-key': `iso-pending-${org}-${stamp}`,
        }),
        201,
      );
      expect(pending.status).toBe('pending');
      seeded[org] = {
        key,
        outcomeId: ingested.records[0].id,
        sharedOutcomeId: ingested.records[1].id,
        grantOutcomeId: grantRecord.records[0].id,
        eventId: own.eventId,
        idempotencyKey: own.idempotencyKey,
        ref: own.requestRef,
        approvalId: approved.id,
        pendingId: pending.id,
        grantId: approved.grant.id,
        spareGrantId: spare.grant.id,
        approvalIdempotencyKey,
      };
    }
  });

  test.afterAll(async () => {
    await api?.dispose();
  });
}

/** What organization b's data would give away: its name, its texts, every id of it. */
export function secretsOf(org: Org): string[] {
  const s = seeded[org];
  return [
    ORG[org],
    `Marker ${org} ${stamp}`,
    `principal-${org}`,
    s.outcomeId,
    s.sharedOutcomeId,
    s.grantOutcomeId,
    s.eventId,
    s.idempotencyKey,
    s.ref,
    s.approvalId,
    s.pendingId,
    s.grantId,
    s.spareGrantId,
  ];
}

/** Nothing of `org` in the answer, except what the caller itself put in the request. */
export function expectNothingOf(org: Org, answer: Answer, sent: string) {
  for (const secret of secretsOf(org)) {
    if (!sent.includes(secret)) expect(answer.text, `leaks "${secret}"`).not.toContain(secret);
  }
}

export type Probe = { method: 'GET' | 'POST'; path: string; data?: unknown; headers?: Record<string, string> };
export type Row = {
  route: string;
  /** What key a does with its own organization's data, and with organization b's. */
  own: () => Probe;
  other: () => Probe;
  ownStatus: number;
  otherStatus: number;
  /** The same request for something that never existed: the answer about b must be this one. */
  absent?: () => Probe;
  /** More checks on the two answers. */
  check?: (own: Answer, other: Answer) => void | Promise<void>;
};

export const redeemBody = { server: READ_ONLY.server, tool: READ_ONLY.tool.name, argsDigest: DIGEST };
export const items = (a: Answer) => (a.json() as { items: { organization: string }[] }).items;
export function searchTerm(org: Org, filter: 'requestRef' | 'idempotencyKey' | 'grantId' | 'principal'): string {
  const s = seeded[org];
  return { requestRef: s.ref, idempotencyKey: s.idempotencyKey, grantId: s.grantId, principal: `principal-${org}` }[
    filter
  ];
}

export const run = (p: Probe) => call(seeded.a.key, p.method, p.path, p.data, p.headers);
// The answer about b's data and the one about nothing, with the names the caller used made equal.
export const normalize = (text: string, probe: Probe) => {
  let out = text;
  for (const s of [...secretsOf('b'), NONE, ABSENT_UUID]) if (probe.path.includes(s)) out = out.replaceAll(s, '<name>');
  return out;
};
