// Hostile query strings, path parameters and header-like text (issue #7, "Hostile input"): every
// list filter and path parameter takes any string and answers 200, 404 or a 422 naming the
// parameter, never a 500; text that people see and that ends up in a header (the incident
// export's file name) cannot inject anything. In-process route handlers on a real database.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem, type Reply } from '@/testing/api-harness';
import {
  type Actors,
  approvalBody,
  fullRecord,
  makeActors,
  newApproval,
  newGrant,
  redeemBody,
} from '@/testing/api-bodies';
import { AWKWARD, hostileText, unstorable } from '@/testing/hostile-values';
import { uniq } from '@/testing/factories';
import { incidentAccessCount, stateFingerprint } from '@/testing/state';

// Every call carries a bearer credential; next-auth does not load outside Next.
vi.mock('@/lib/server/http/auth', () => ({ auth: async () => null }));

let actors: Actors;
let pending = '';
let grant = '';

beforeAll(async () => {
  actors = await makeActors();
  pending = (await newApproval(actors)).id;
  grant = await newGrant(actors);
});

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

  it('NUL, a repeated parameter or an over-long value: 422 naming it', async () => {
    for (const [list, key] of [
      [api.listOutcomes, 'requestRef'],
      [api.listOutcomes, 'principal'],
      [api.listApprovals, 'server'],
      [api.listApprovals, 'requestRef'],
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

// ── Path parameters ─────────────────────────────────────────────────────────────────────────

const pathValue = fc.oneof(
  hostileText,
  fc.uuid(),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('..', '../approvals', '%00', ' ', 'null', 'undefined', '0', 'x'.repeat(10_000)),
);

describe('any path parameter: 404, or 422 for a reference no record can have; never a 500', () => {
  it('GET /outcomes/{id}, /approvals/{id}; POST decisions, revoke, redeem', async () => {
    const before = await stateFingerprint();
    await fc.assert(
      fc.asyncProperty(pathValue, async (id) => {
        expectProblem(await call(api.getOutcome, { token: actors.key, params: { id } }), [404]);
        expectProblem(await call(api.getApproval, { token: actors.key, params: { id } }), [404]);
        expectProblem(
          await call(api.decide, {
            token: actors.reviewer,
            params: { id },
            body: { decision: 'approve', reason: 'fine', version: 1 },
          }),
          [404],
        );
        expectProblem(
          await call(api.revoke, { token: actors.admin, params: { id }, body: { reason: 'mistake' } }),
          [404],
        );
        expectProblem(
          await call(api.redeem, { token: actors.key, params: { grantId: id }, body: redeemBody() }),
          [404],
        );
      }),
      { numRuns: 60 },
    );
    expect(await stateFingerprint()).toBe(before);
    // The real ones still work.
    expectOk(await call(api.getApproval, { token: actors.key, params: { id: pending } }), [200]);
    expectOk(await call(api.redeem, { token: actors.key, params: { grantId: grant }, body: redeemBody() }), [200]);
  });

  it('GET /incidents/{ref}: 404 when nothing is recorded, 422 naming requestRef when nothing could be', async () => {
    await fc.assert(
      fc.asyncProperty(pathValue, async (ref) => {
        const r = await call(api.incident, { token: actors.key, params: { ref } });
        if (unstorable(ref) || ref.length > 200 || ref === '') expectProblem(r, [422], 'requestRef');
        else expectProblem(r, [404]);
      }),
      { numRuns: 80 },
    );
    for (const ref of ['a\u0000b', '\u0000', 'x\ud800', 'x'.repeat(201)]) {
      expectProblem(
        await call(api.incident, { token: actors.key, params: { ref }, query: { format: 'markdown' } }),
        [422],
        'requestRef',
      );
    }
  });
});

// ── Header-like text ────────────────────────────────────────────────────────────────────────

const INJECTED = 'X-Injected';
const headerLike = [
  `req\r\n${INJECTED}: yes`,
  `req\n${INJECTED}: yes`,
  `req\r${INJECTED}: yes`,
  'req"; filename="evil.sh',
  'req;attachment',
  '../../etc/passwd',
  'req\u0085next',
  'req\u2028next',
  `req ${AWKWARD.join('')}`,
  'rép-ünïcode-✓',
  '%0d%0aX-Injected:%20yes',
];

describe('CR/LF and header-like text in fields people see', () => {
  it('a request reference with CR/LF, quotes or unicode: stored as sent, and the export file name stays one safe token', async () => {
    for (const requestRef of headerLike) {
      const record = {
        ...fullRecord(),
        requestRef,
        summary: `Refund\r\n${INJECTED}: yes\r\n\r\n<h1>body</h1>`,
        agent: `bot\r\nSet-Cookie: a=b`,
      };
      const posted = await call(api.postOutcomes, { token: actors.key, body: { records: [record] } });
      expectOk(posted, [200]);
      expectOk(
        await call(api.postApproval, {
          token: actors.key,
          body: approvalBody({ requestRef, summary: record.summary }),
          headers: { 'idempotency-key': uniq('idem') },
        }),
        [201],
      );

      for (const format of ['markdown', 'json']) {
        const r = await call(api.incident, {
          token: actors.key,
          params: { ref: requestRef },
          query: { format, download: '1' },
        });
        expectOk(r, [200]);
        expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="incident-[\w.-]+\.(md|json)"$/);
        expect(r.headers.get(INJECTED)).toBeNull();
        expect(r.headers.get('set-cookie')).toBeNull();
        for (const [name, value] of r.headers) expect(`${name}: ${value}`).not.toMatch(/[\r\n]/);
        if (format === 'json') expect(r.json.requestRef).toBe(requestRef);
        // In Markdown every untrusted value is one line of literal text: no header, no raw HTML.
        else expect(r.text).not.toMatch(/^X-Injected|^Set-Cookie|<h1>/im);
      }
      const stored = await call(api.getOutcome, { token: actors.key, params: { id: posted.json.records[0].id } });
      expect(stored.json).toMatchObject({ requestRef, summary: record.summary, agent: record.agent });
      for (const [name, value] of stored.headers) expect(`${name}: ${value}`).not.toMatch(/[\r\n]|injected/i);
    }
  });

  it('an Idempotency-Key cannot carry a line break (the header itself refuses it) nor echo into anything', async () => {
    expect(() => new Headers({ 'idempotency-key': 'a\r\nX-Injected: yes' })).toThrow();
    const r = await call(api.postApproval, {
      token: actors.key,
      body: approvalBody(),
      headers: { 'idempotency-key': 'a"b<c>' },
    });
    expectOk(r, [201]);
    for (const [name, value] of r.headers) expect(`${name}: ${value}`).not.toContain('a"b<c>');
  });
});
