import { expect, test, type APIRequestContext } from '@playwright/test';
import { cli, secretFrom, users } from '../testing/e2e';

// An organization-limited API key against every /api/v1 route, through the real server: its own
// organization's data works; another organization's is as absent as data that never existed
// (reads and grant redemption: the very same 404), cannot be written (403 naming only the key's
// own organization), never shows up in lists, filters or incidents, and no answer, count or error
// text carries anything of it. People-only routes refuse every key alike, whatever it points at.

const stamp = Date.now().toString(36);
const ORG = { a: `iso-a-${stamp}`, b: `iso-b-${stamp}` };
const SHARED_REF = `iso-shared-${stamp}`; // both organizations record under this reference
const EXTRA_REF = `iso-extra-${stamp}`; // where the matrix's own writes go, apart from the seeded references
const NONE = `iso-none-${stamp}`; // a name nothing is recorded under
const DIGEST = `sha256:${'ef'.repeat(32)}`;
const READ_ONLY = { server: 'orders-mcp', tool: { name: 'get_order', annotations: { readOnlyHint: true } } }; // approved at once (demo data)
const NEEDS_APPROVAL = {
  server: 'billing-mcp',
  tool: { name: 'add_note', annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false } },
};
const ABSENT_UUID = '00000000-0000-4000-8000-000000000000';

type Org = keyof typeof ORG;
type Seeded = {
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
const seeded = {} as Record<Org, Seeded>;
let unlimitedKey = '';
let adminToken = '';
let api: APIRequestContext;

type Answer = { status: number; text: string; json: () => unknown };
async function call(
  secret: string,
  method: 'GET' | 'POST',
  path: string,
  data?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await api.fetch(path, { method, data, headers: { authorization: `Bearer ${secret}`, ...headers } });
  const text = await res.text();
  return { status: res.status(), text, json: () => JSON.parse(text) };
}

const record = (org: Org, over: Record<string, unknown> = {}) => ({
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

const approvalBody = (
  org: Org,
  shape: typeof READ_ONLY | typeof NEEDS_APPROVAL,
  over: Record<string, unknown> = {},
) => ({
  requestRef: `iso-ref-${org}-${stamp}`,
  organization: ORG[org],
  principal: `principal-${org}`,
  agent: 'iso-bot',
  ...shape,
  argsDigest: DIGEST,
  summary: `Marker ${org} ${stamp}: approval`,
  ...over,
});

async function ok<T>(answer: Promise<Answer>, status = 200): Promise<T> {
  const a = await answer;
  expect(a.status, a.text).toBe(status);
  return a.json() as T;
}

test.beforeAll(async ({ playwright }, testInfo) => {
  test.setTimeout(120_000);
  api = await playwright.request.newContext({ baseURL: testInfo.project.use.baseURL });
  const scopes = 'outcomes:write,outcomes:read,approvals:request,grants:redeem';
  unlimitedKey = secretFrom(cli('apikeys:create', '--name', `e2e-iso-all-${stamp}`, '--scopes', scopes), 'cs_live_');
  adminToken = secretFrom(cli('tokens:create', '--email', users.admin.email, '--name', `e2e-iso-${stamp}`), 'cs_pat_');
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

/** What organization b's data would give away: its name, its texts, every id of it. */
function secretsOf(org: Org): string[] {
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
function expectNothingOf(org: Org, answer: Answer, sent: string) {
  for (const secret of secretsOf(org)) {
    if (!sent.includes(secret)) expect(answer.text, `leaks "${secret}"`).not.toContain(secret);
  }
}

type Probe = { method: 'GET' | 'POST'; path: string; data?: unknown; headers?: Record<string, string> };
type Row = {
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

const redeemBody = { server: READ_ONLY.server, tool: READ_ONLY.tool.name, argsDigest: DIGEST };
const items = (a: Answer) => (a.json() as { items: { organization: string }[] }).items;

const matrix: Row[] = [
  {
    route: 'GET /api/v1/outcomes/{id}',
    own: () => ({ method: 'GET', path: `/api/v1/outcomes/${seeded.a.outcomeId}` }),
    other: () => ({ method: 'GET', path: `/api/v1/outcomes/${seeded.b.outcomeId}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/outcomes/${ABSENT_UUID}` }),
    ownStatus: 200,
    otherStatus: 404,
  },
  {
    route: 'GET /api/v1/outcomes (the whole list)',
    own: () => ({ method: 'GET', path: '/api/v1/outcomes?limit=200' }),
    other: () => ({ method: 'GET', path: `/api/v1/outcomes?organization=${ORG.b}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/outcomes?organization=${NONE}` }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own) => {
      const list = items(own);
      expect(list.length).toBeGreaterThanOrEqual(2);
      expect(new Set(list.map((i) => i.organization))).toEqual(new Set([ORG.a]));
    },
  },
  ...(['requestRef', 'idempotencyKey', 'grantId', 'principal'] as const).map((filter): Row => ({
    route: `GET /api/v1/outcomes?${filter}= (search)`,
    own: () => ({ method: 'GET', path: `/api/v1/outcomes?${filter}=${encodeURIComponent(searchTerm('a', filter))}` }),
    other: () => ({ method: 'GET', path: `/api/v1/outcomes?${filter}=${encodeURIComponent(searchTerm('b', filter))}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/outcomes?${filter}=${NONE}` }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own) => expect(items(own).length).toBeGreaterThanOrEqual(1),
  })),
  {
    route: 'GET /api/v1/outcomes?requestRef= (a reference both organizations use)',
    own: () => ({ method: 'GET', path: `/api/v1/outcomes?requestRef=${SHARED_REF}` }),
    other: () => ({ method: 'GET', path: `/api/v1/outcomes?requestRef=${SHARED_REF}&organization=${ORG.b}` }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own, other) => {
      expect(items(own).map((i) => i.organization)).toEqual([ORG.a]);
      expect(items(other)).toEqual([]);
    },
  },
  {
    route: 'POST /api/v1/outcomes (ingest)',
    own: () => ({
      method: 'POST',
      path: '/api/v1/outcomes',
      data: { records: [record('a', { eventId: `evt-own-${stamp}`, requestRef: EXTRA_REF })] },
    }),
    // A mixed batch: b's record is refused, and so is a's alongside it (a batch is whole or nothing).
    other: () => ({
      method: 'POST',
      path: '/api/v1/outcomes',
      data: {
        records: [
          record('a', { eventId: `evt-mixed-a-${stamp}`, requestRef: EXTRA_REF }),
          record('b', { eventId: `evt-mixed-b-${stamp}`, requestRef: EXTRA_REF }),
        ],
      },
    }),
    ownStatus: 200,
    otherStatus: 403,
    check: async (own, other) => {
      expect(own.json()).toMatchObject({ accepted: 1, duplicates: 0 });
      expect(other.json()).toMatchObject({
        code: 'forbidden',
        errors: [
          {
            path: 'records.1.organization',
            message: `this API key may only write records of the organization "${ORG.a}"`,
          },
        ],
      });
      const stored = await call(adminToken, 'GET', `/api/v1/outcomes?requestRef=${EXTRA_REF}&limit=200`);
      expect(stored.text).toContain(`evt-own-${stamp}`);
      expect(stored.text).not.toContain('evt-mixed-');
    },
  },
  {
    route: 'POST /api/v1/outcomes (an eventId organization b already used)',
    // Event ids are per key: b's id is a's to use, and nothing says b has it.
    own: () => ({
      method: 'POST',
      path: '/api/v1/outcomes',
      data: {
        records: [record('a', { eventId: seeded.b.eventId, requestRef: EXTRA_REF, summary: 'different content' })],
      },
    }),
    other: () => ({
      method: 'POST',
      path: '/api/v1/outcomes',
      data: {
        records: [record('a', { eventId: seeded.b.eventId, requestRef: EXTRA_REF, summary: 'different content' })],
      },
    }),
    ownStatus: 200,
    otherStatus: 200,
    check: (first, again) => {
      expect(first.json()).toMatchObject({ accepted: 1, duplicates: 0 });
      expect(again.json()).toMatchObject({ accepted: 0, duplicates: 1 }); // a duplicate of a's own, not of b's
    },
  },
  {
    route: 'GET /api/v1/incidents/{ref}',
    own: () => ({ method: 'GET', path: `/api/v1/incidents/${seeded.a.ref}` }),
    other: () => ({ method: 'GET', path: `/api/v1/incidents/${seeded.b.ref}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/incidents/${NONE}` }),
    ownStatus: 200,
    otherStatus: 404,
    check: (own) => {
      const body = own.json() as { approvals: unknown[]; timeline: { kind: string }[] };
      expect(body.approvals).toHaveLength(2);
      expect(body.timeline.length).toBeGreaterThanOrEqual(3);
    },
  },
  {
    route: 'GET /api/v1/incidents/{ref}?format=markdown',
    own: () => ({ method: 'GET', path: `/api/v1/incidents/${seeded.a.ref}?format=markdown&download=1` }),
    other: () => ({ method: 'GET', path: `/api/v1/incidents/${seeded.b.ref}?format=markdown&download=1` }),
    absent: () => ({ method: 'GET', path: `/api/v1/incidents/${NONE}?format=markdown&download=1` }),
    ownStatus: 200,
    otherStatus: 404,
    check: (own) => expect(own.text).toContain(`Marker a ${stamp}`),
  },
  {
    route: 'GET /api/v1/incidents/{ref} (a reference both organizations use)',
    own: () => ({ method: 'GET', path: `/api/v1/incidents/${SHARED_REF}` }),
    other: () => ({ method: 'GET', path: `/api/v1/incidents/${SHARED_REF}?format=markdown` }),
    ownStatus: 200,
    otherStatus: 200,
    check: (own, other) => {
      const body = own.json() as {
        approvals: unknown[];
        timeline: { kind: string }[];
        summary: Record<string, unknown[]>;
      };
      expect(body.approvals).toHaveLength(1);
      expect(own.text).toContain(`Marker a ${stamp}`);
      expect(other.text).toContain(`Marker a ${stamp}`);
    },
  },
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
];

function searchTerm(org: Org, filter: 'requestRef' | 'idempotencyKey' | 'grantId' | 'principal'): string {
  const s = seeded[org];
  return { requestRef: s.ref, idempotencyKey: s.idempotencyKey, grantId: s.grantId, principal: `principal-${org}` }[
    filter
  ];
}

const run = (p: Probe) => call(seeded.a.key, p.method, p.path, p.data, p.headers);
// The answer about b's data and the one about nothing, with the names the caller used made equal.
const normalize = (text: string, probe: Probe) => {
  let out = text;
  for (const s of [...secretsOf('b'), NONE, ABSENT_UUID]) if (probe.path.includes(s)) out = out.replaceAll(s, '<name>');
  return out;
};

test.describe('organization isolation: an organization-limited key on every route', () => {
  test('the routes under app/api/v1 are all in the matrix', async () => {
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const path = `${dir}/${entry}`;
        if (statSync(path).isDirectory()) walk(path);
        else if (entry === 'route.ts') {
          const route = path
            .replace(/^app/, '')
            .replace(/\/route\.ts$/, '')
            .replace(/\[(\w+)\]/g, (_m, p: string) => (p === 'ref' ? '{ref}' : p === 'grantId' ? '{grantId}' : '{id}'));
          for (const m of readFileSync(path, 'utf8').matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b/g))
            found.push(`${m[1]} ${route}`);
        }
      }
    };
    walk('app/api/v1');
    const covered = new Set(matrix.map((r) => r.route.split(' (')[0].split('?')[0]));
    expect(found.filter((r) => !covered.has(r))).toEqual([]);
    expect(found.length).toBeGreaterThanOrEqual(13);
  });

  test('the data is really there: organization b sees its own, an unlimited key and a person see both', async () => {
    for (const secret of [unlimitedKey, adminToken]) {
      const list = await ok<{ items: { organization: string }[] }>(
        call(secret, 'GET', `/api/v1/outcomes?requestRef=${SHARED_REF}`),
      );
      expect(new Set(list.items.map((i) => i.organization))).toEqual(new Set([ORG.a, ORG.b]));
      const incident = await call(secret, 'GET', `/api/v1/incidents/${SHARED_REF}`);
      expect(incident.text).toContain(`Marker b ${stamp}`);
      expect(incident.text).toContain(`Marker a ${stamp}`);
    }
    expect((await call(seeded.b.key, 'GET', `/api/v1/outcomes/${seeded.b.outcomeId}`)).status).toBe(200);
    expect((await call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.approvalId}`)).status).toBe(200);
    expect((await call(seeded.b.key, 'GET', `/api/v1/incidents/${seeded.b.ref}`)).status).toBe(200);
  });

  for (const row of matrix) {
    test(row.route, async () => {
      const ownProbe = row.own();
      const otherProbe = row.other();
      const own = await run(ownProbe);
      expect(own.status, own.text).toBe(row.ownStatus);
      const other = await run(otherProbe);
      expect(other.status, other.text).toBe(row.otherStatus);
      expectNothingOf('b', own, JSON.stringify(ownProbe));
      expectNothingOf('b', other, JSON.stringify(otherProbe));
      if (row.absent) {
        const absentProbe = row.absent();
        const absent = await run(absentProbe);
        expect(absent.status).toBe(row.otherStatus);
        expect(normalize(other.text, otherProbe)).toBe(normalize(absent.text, absentProbe));
      }
      await row.check?.(own, other);
    });
  }

  test("after all that, organization b's grant is still unredeemed and its own key redeems it", async () => {
    const grant = await ok<{ grant: { redeemedAt: string | null } }>(
      call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.approvalId}`),
    );
    expect(grant.grant.redeemedAt).toBeNull();
    await ok(call(seeded.b.key, 'POST', `/api/v1/grants/${seeded.b.grantId}/redeem`, redeemBody));
    // and a's redemption of its own grant happened (the matrix row above), b's pending request is untouched
    const pending = await ok<{ status: string; decisions: unknown[] }>(
      call(seeded.b.key, 'GET', `/api/v1/approvals/${seeded.b.pendingId}`),
    );
    expect(pending).toMatchObject({ status: 'pending', decisions: [] });
  });
});
