// The e2e suite's check of answers against the reference (testing/api-contract-check.ts), on
// hand-written answers: a true one passes, and each kind of drift is named.
import { describe, expect, it } from 'vitest';
import { contractViolation } from '@/testing/api-contract-check';

const base = 'http://127.0.0.1:3000/api/v1';
const JSON_TYPE = 'application/json';
const PROBLEM = 'application/problem+json';
const at = '2026-11-30T12:00:00.000Z';
const verification = JSON.stringify({ ok: true, entries: 12, head: 'sha256:ab' });
const problem = (status: number, code: string, extra: object = {}) =>
  JSON.stringify({ type: `/problems/${code}`, title: 'T', status, code, detail: 'd', ...extra });

describe('contractViolation', () => {
  it('accepts answers as documented', () => {
    expect(contractViolation('GET', `${base}/audit/verify`, 200, JSON_TYPE, verification)).toBeNull();
    expect(contractViolation('GET', `${base}/approvals/pending-count`, 200, JSON_TYPE, '{"pending":3}')).toBeNull();
    const redemption = { grantId: crypto.randomUUID(), approvalId: crypto.randomUUID(), redeemedAt: at };
    const body = JSON.stringify({ ...redemption, server: 's', tool: 't', argsDigest: 'sha256:x' });
    expect(contractViolation('POST', `${base}/grants/${crypto.randomUUID()}/redeem`, 200, JSON_TYPE, body)).toBeNull();
    const invalid = problem(422, 'invalid_input', { errors: [{ path: 'records.0.eventId', message: 'Required' }] });
    expect(contractViolation('POST', `${base}/outcomes`, 422, PROBLEM, invalid)).toBeNull();
    expect(contractViolation('GET', `${base}/incidents/req_1?format=markdown`, 200, 'text/markdown', '# x')).toBeNull();
  });

  it('names a field the reference does not have, or a wrong type', () => {
    const extra = JSON.stringify({ ok: true, entries: 12, head: 'sha256:ab', secret: 'x' });
    expect(contractViolation('GET', `${base}/audit/verify`, 200, JSON_TYPE, extra)).toMatch(/secret/);
    expect(contractViolation('GET', `${base}/approvals/pending-count`, 200, JSON_TYPE, '{"pending":"3"}')).toMatch(
      /pending/,
    );
  });

  it('refuses statuses and codes the operation does not document', () => {
    expect(contractViolation('GET', `${base}/audit/verify`, 404, PROBLEM, problem(404, 'not_found'))).toMatch(
      /status the reference does not list/,
    );
    expect(contractViolation('POST', `${base}/outcomes`, 409, PROBLEM, problem(409, 'conflict'))).toMatch(/status/);
    expect(contractViolation('POST', `${base}/outcomes`, 422, PROBLEM, problem(422, 'gone'))).toMatch(/code/);
    expect(contractViolation('GET', `${base}/me`, 500, PROBLEM, problem(500, 'internal'))).not.toBeNull();
    expect(contractViolation('GET', `${base}/me`, 201, JSON_TYPE, '{}')).toMatch(/status/);
  });

  it('a problem on a path or method no route has is not in the reference; Next’s own 404/405 are not checked', () => {
    expect(contractViolation('GET', `${base}/nope`, 404, 'text/html', '<html>')).toBeNull();
    expect(contractViolation('DELETE', `${base}/outcomes`, 405, undefined, '')).toBeNull();
    expect(contractViolation('GET', `${base}/nope`, 400, PROBLEM, problem(400, 'invalid_input'))).toMatch(
      /unknown path/,
    );
    expect(contractViolation('GET', 'http://127.0.0.1:3000/sign-in', 200, 'text/html', '')).toBeNull();
  });
});
