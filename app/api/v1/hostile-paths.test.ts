// Hostile path parameters and header-like text: every path parameter
// takes any string and answers 404 or a 422 naming it, never a 500; text that people see and that
// ends up in a header (the incident export's file name) cannot inject anything. In-process route
// handlers on a real database.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { api, call, expectOk, expectProblem } from '@/testing/api-harness';
import { approvalBody, fullRecord, redeemBody } from '@/testing/api-bodies';
import { AWKWARD, hostileText, unstorable } from '@/testing/hostile-values';
import { uniq } from '@/testing/factories';
import { stateFingerprint } from '@/testing/state';
import { actors, pending, grant, setUpQueryActors } from '@/testing/hostile-query-actors';

// Every call carries a bearer credential; next-auth does not load outside Next.
vi.mock('@/lib/server/auth/auth', () => ({ auth: async () => null }));

beforeAll(setUpQueryActors);

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
