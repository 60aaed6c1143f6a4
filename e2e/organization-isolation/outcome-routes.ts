// The isolation matrix (e2e/organization-isolation.spec.ts): outcome records and incidents.
import { expect } from '@playwright/test';
import {
  stamp,
  ORG,
  SHARED_REF,
  EXTRA_REF,
  NONE,
  ABSENT_UUID,
  seeded,
  adminToken,
  call,
  record,
  type Row,
  items,
  searchTerm,
} from '../../testing/isolation';

// A guard check of organization `org`, in a request reference of its own (no history: allowed).
const guardBody = (org: 'a' | 'b') => {
  const { eventId, requestRef, organization, principal, server, tool, argsDigest } = record(org, {
    requestRef: `iso-guard-${org}-${stamp}`,
  });
  return { eventId, requestRef, organization, principal, server, tool, argsDigest };
};

// One MCP client span as an OTLP/JSON export, for organization `org`.
const otlpExport = (org: 'a' | 'b', spanId: string) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'iso-agent' } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: 'ab'.repeat(16),
              spanId,
              name: 'tools/call get_order',
              kind: 3,
              startTimeUnixNano: '1764590400000000000',
              endTimeUnixNano: '1764590400250000000',
              attributes: [
                ['mcp.method.name', 'tools/call'],
                ['gen_ai.tool.name', 'get_order'],
                ['countersign.server', 'orders-mcp'],
                ['countersign.request_ref', EXTRA_REF],
                ['countersign.principal', `principal-${org}`],
                ['countersign.organization', ORG[org]],
              ].map(([key, stringValue]) => ({ key, value: { stringValue } })),
              status: {},
            },
          ],
        },
      ],
    },
  ],
});

export const outcomeRoutes: Row[] = [
  {
    route: 'GET /api/v1/outcomes/{id}',
    own: () => ({ method: 'GET', path: `/api/v1/outcomes/${seeded.a.outcomeId}` }),
    other: () => ({ method: 'GET', path: `/api/v1/outcomes/${seeded.b.outcomeId}` }),
    absent: () => ({ method: 'GET', path: `/api/v1/outcomes/${ABSENT_UUID}` }),
    ownStatus: 200,
    otherStatus: 404,
  },
  {
    // The seeded records completed: a's own is 409 (not unknown, so nothing to check); b's is as
    // absent as a record that never existed, and stays unresolved.
    route: 'POST /api/v1/outcomes/{id}/state-check',
    own: () => ({
      method: 'POST',
      path: `/api/v1/outcomes/${seeded.a.outcomeId}/state-check`,
      data: { verdict: 'happened', note: 'isolation probe' },
    }),
    other: () => ({
      method: 'POST',
      path: `/api/v1/outcomes/${seeded.b.outcomeId}/state-check`,
      data: { verdict: 'happened', note: 'isolation probe' },
    }),
    absent: () => ({
      method: 'POST',
      path: `/api/v1/outcomes/${ABSENT_UUID}/state-check`,
      data: { verdict: 'happened', note: 'isolation probe' },
    }),
    ownStatus: 409,
    otherStatus: 404,
    check: async (own) => {
      expect(own.json()).toMatchObject({ code: 'conflict' });
      const b = await call(adminToken, 'GET', `/api/v1/outcomes/${seeded.b.outcomeId}`);
      expect((b.json() as { resolution: unknown }).resolution).toBeNull();
    },
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
    route: 'POST /api/v1/guards/check',
    // A check for its own organization is decided; one for b's is refused by name, and its
    // queued record is not stored either.
    own: () => ({ method: 'POST', path: '/api/v1/guards/check', data: guardBody('a') }),
    other: () => ({
      method: 'POST',
      path: '/api/v1/guards/check',
      data: {
        ...guardBody('b'),
        records: [record('a', { eventId: `evt-guard-queued-${stamp}`, requestRef: EXTRA_REF })],
      },
    }),
    ownStatus: 200,
    otherStatus: 403,
    check: async (own, other) => {
      expect(own.json()).toEqual({ decision: 'allow' });
      expect(other.json()).toMatchObject({
        code: 'forbidden',
        errors: [
          { path: 'organization', message: `this API key may only check and write for the organization "${ORG.a}"` },
        ],
      });
      const stored = await call(adminToken, 'GET', `/api/v1/outcomes?requestRef=${EXTRA_REF}&limit=200`);
      expect(stored.text).not.toContain(`evt-guard-queued-${stamp}`);
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
    // A span of organization b is rejected by name of the key's own organization; a's is stored.
    route: 'POST /api/v1/otlp/v1/traces',
    own: () => ({
      method: 'POST',
      path: '/api/v1/otlp/v1/traces',
      data: otlpExport(
        'a',
        `${stamp}`
          .padEnd(16, '0')
          .slice(0, 16)
          .replace(/[^0-9a-f]/g, 'a'),
      ),
    }),
    other: () => ({ method: 'POST', path: '/api/v1/otlp/v1/traces', data: otlpExport('b', 'b'.repeat(16)) }),
    ownStatus: 200,
    otherStatus: 200,
    check: async (own, other) => {
      expect(own.json()).toEqual({ partialSuccess: {} });
      expect(other.json()).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });
      expect(other.text).not.toContain(ORG.b);
      const stored = await call(adminToken, 'GET', `/api/v1/outcomes?requestRef=${EXTRA_REF}&limit=200`);
      expect(stored.text).not.toContain(`otel:${'ab'.repeat(16)}:${'b'.repeat(16)}`);
    },
  },
];
