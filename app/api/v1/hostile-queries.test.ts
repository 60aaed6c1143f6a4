// Hostile query strings: every list filter takes any string and answers
// 200 or a 422 naming the parameter, never a 500, and writes nothing. In-process route handlers on a
// real database; hostile path parameters and header-like text are in hostile-paths.test.ts.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import { fullRecord } from '@/testing/api-bodies';
import { hostileText } from '@/testing/hostile-values';
import { uniq } from '@/testing/factories';
import { incidentAccessCount, stateFingerprint } from '@/testing/state';
import { actors, setUpQueryActors } from '@/testing/hostile-query-actors';

// Every call carries a bearer credential; next-auth does not load outside Next.
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

beforeAll(setUpQueryActors);

// ── Query strings ───────────────────────────────────────────────────────────────────────────

const outcomeKeys = [
  'requestRef',
  'idempotencyKey',
  'grantId',
  'delivery',
  'category',
  'boundary',
  'retry',
  'readOnly',
  'tool',
  'server',
  'organization',
  'principal',
  'from',
  'to',
  'cursor',
  'limit',
];
const approvalKeys = ['status', 'server', 'tool', 'principal', 'organization', 'requestRef', 'cursor', 'limit'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

const plausible = fc.constantFrom(
  '',
  'true',
  'false',
  'unknown',
  'completed',
  'pending',
  'live',
  'ok',
  '1',
  '0',
  '-1',
  '200',
  '201',
  '1e2',
  '0x10',
  ' 5',
  '2026-11-30T12:00:00Z',
  '2026-11-30',
  '0000-01-01T00:00:00Z',
  'eyJ9',
  'W10',
  'x'.repeat(201),
  'x'.repeat(5000),
);
const paramValue = fc.oneof(plausible, hostileText, fc.string({ maxLength: 12 }));
const queryOf = (keys: string[]) =>
  fc.array(
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...keys) },
        fc.constantFrom(...PROTO_KEYS),
        fc.string({ minLength: 1, maxLength: 6 }),
      ),
      paramValue,
    ),
    { maxLength: 5 },
  );

const encode = (pairs: [string, string][]) => {
  const search = new URLSearchParams();
  for (const [k, v] of pairs) search.append(k, v);
  return search.toString();
};

/** 200 with a page, or a 422 naming only parameters that were sent, each unknown one among them. */
function expectPageOrNamedRefusal(r: Reply, pairs: [string, string][], known: string[]) {
  // URLSearchParams carries what it can: an unpaired surrogate arrives as U+FFFD.
  const sent = new Set(new URLSearchParams(encode(pairs)).keys());
  if (r.status === 200) {
    expect(r.json.items).toBeInstanceOf(Array);
    expect([...sent].every((k) => known.includes(k))).toBe(true);
    return;
  }
  expectProblem(r, [422]);
  const named: string[] = r.json.errors.map((e: { path: string }) => e.path);
  for (const p of named) expect([...sent], `${p} was not sent`).toContain(p);
  for (const k of sent) if (!known.includes(k)) expect(named).toContain(k);
}

describe('any query string: a page or a 422 naming the parameters at fault, nothing written', () => {
  it('GET /outcomes', async () => {
    const before = [await stateFingerprint(), await incidentAccessCount()];
    await fc.assert(
      fc.asyncProperty(queryOf(outcomeKeys), async (pairs) => {
        expectPageOrNamedRefusal(
          await call(api.listOutcomes, { token: actors.key, query: encode(pairs) }),
          pairs,
          outcomeKeys,
        );
      }),
      { numRuns: 150 },
    );
    expect([await stateFingerprint(), await incidentAccessCount()]).toEqual(before);
  });

  it('GET /approvals', async () => {
    const before = await stateFingerprint();
    await fc.assert(
      fc.asyncProperty(queryOf(approvalKeys), async (pairs) => {
        expectPageOrNamedRefusal(
          await call(api.listApprovals, { token: actors.key, query: encode(pairs) }),
          pairs,
          approvalKeys,
        );
      }),
      { numRuns: 150 },
    );
    expect(await stateFingerprint()).toBe(before);
  });

  it('GET /tools: the catalog of the one server named, a 404 for a server never reported, else a 422', async () => {
    const known = uniq('srv');
    const pinned = { server: known, tools: [{ name: 'get_order', inputSchema: { type: 'object' } }] };
    expectOk(await call(api.evaluatePolicy, { token: actors.key, body: pinned }), [200]);
    const before = await stateFingerprint();
    const pairs = fc.array(
      fc.tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.constant('server') },
          fc.constantFrom(...PROTO_KEYS),
          fc.string({ minLength: 1, maxLength: 6 }),
        ),
        fc.oneof({ weight: 2, arbitrary: fc.constant(known) }, paramValue),
      ),
      { maxLength: 4 },
    );
    await fc.assert(
      fc.asyncProperty(pairs, async (pairs) => {
        const r = await call(api.listTools, { token: actors.key, query: encode(pairs) });
        const sent = new URLSearchParams(encode(pairs));
        const servers = sent.getAll('server');
        const wellFormed = [...sent.keys()].every((k) => k === 'server') && servers.length === 1;
        if (r.status === 200) {
          expect(wellFormed && servers[0] === known).toBe(true);
          expect(r.json).toMatchObject({ server: known, tools: [{ name: 'get_order' }] });
        } else if (r.status === 404) {
          expect(wellFormed && servers[0] !== known).toBe(true);
          expectProblem(r, [404]);
        } else {
          expectProblem(r, [422]);
          const named: string[] = r.json.errors.map((e: { path: string }) => e.path);
          // `server` is required: named when missing too.
          for (const p of named) if (p !== 'server') expect([...sent.keys()], `${p} was not sent`).toContain(p);
          for (const k of sent.keys()) if (k !== 'server') expect(named).toContain(k);
          if (!servers.length) expect(named).toContain('server');
        }
      }),
      { numRuns: 150 },
    );
    expect(await stateFingerprint()).toBe(before);
  });

  it('NUL, a repeated parameter or an over-long value: 422 naming it', async () => {
    for (const [list, key] of [
      [api.listOutcomes, 'requestRef'],
      [api.listOutcomes, 'principal'],
      [api.listApprovals, 'server'],
      [api.listApprovals, 'requestRef'],
      [api.listTools, 'server'],
    ] as const) {
      expectProblem(await call(list, { token: actors.key, query: { [key]: 'a\u0000b' } }), [422], key);
      expectProblem(await call(list, { token: actors.key, query: { [key]: ['a', 'b'] } }), [422], key);
      expectProblem(await call(list, { token: actors.key, query: { [key]: 'x'.repeat(201) } }), [422], key);
    }
    expectProblem(
      await call(api.listOutcomes, { token: actors.key, query: '__proto__=1&constructor=2' }),
      [422],
      '__proto__',
    );
  });

  it('GET /incidents/{ref}: format and download take only their values', async () => {
    const ref = uniq('req');
    expectOk(
      await call(api.postOutcomes, { token: actors.key, body: { records: [{ ...fullRecord(), requestRef: ref }] } }),
      [200],
    );
    const before = await incidentAccessCount();
    await fc.assert(
      fc.asyncProperty(queryOf(['format', 'download']), async (pairs) => {
        const r = await call(api.incident, { token: actors.key, params: { ref }, query: encode(pairs) });
        const sent = new URLSearchParams(encode(pairs));
        const fine =
          [...sent.keys()].every((k) => ['format', 'download'].includes(k) && sent.getAll(k).length === 1) &&
          [null, 'json', 'markdown'].includes(sent.get('format')) &&
          [null, '1', 'true'].includes(sent.get('download'));
        if (fine) expectOk(r, [200]);
        else expectProblem(r, [422]);
      }),
      { numRuns: 80 },
    );
    // Refused queries are not reads: only the answered ones were logged.
    expect(await incidentAccessCount()).toBeGreaterThan(before);
  });
});
