// For the hostile-input tests (never imported by the app): the /api/v1 route handlers called
// in-process with real `Request` objects, and what a refusal must look like (docs/api.md, "Errors").
// Credentials and valid bodies are in api-bodies.ts, hostile values and JSON paths in hostile-values.ts.
import { expect } from 'vitest';
import { GET as listOutcomes, POST as postOutcomes } from '@/app/api/v1/outcomes/route';
import { GET as getOutcome } from '@/app/api/v1/outcomes/[id]/route';
import { POST as stateCheck } from '@/app/api/v1/outcomes/[id]/state-check/route';
import { GET as listApprovals, POST as postApproval } from '@/app/api/v1/approvals/route';
import { GET as getApproval } from '@/app/api/v1/approvals/[id]/route';
import { POST as decide } from '@/app/api/v1/approvals/[id]/decisions/route';
import { POST as revoke } from '@/app/api/v1/approvals/[id]/revoke/route';
import { POST as withdraw } from '@/app/api/v1/approvals/[id]/withdraw/route';
import { POST as redeem } from '@/app/api/v1/grants/[grantId]/redeem/route';
import { GET as getIncident } from '@/app/api/v1/incidents/[ref]/route';
import { GET as me } from '@/app/api/v1/me/route';
import { POST as trust } from '@/app/api/v1/servers/trust/route';
import { POST as evaluatePolicy } from '@/app/api/v1/policy/evaluate/route';
import { GET as listTools } from '@/app/api/v1/tools/route';
import { POST as acceptTool } from '@/app/api/v1/tools/accept/route';
import { POST as checkGuard } from '@/app/api/v1/guards/check/route';

type Handler = (request: Request, context: { params: Promise<never> }) => Promise<Response>;
type Endpoint = { method: 'GET' | 'POST'; path: string; handler: Handler };
const endpoint = (method: Endpoint['method'], path: string, handler: unknown): Endpoint => ({
  method,
  path,
  handler: handler as Handler,
});

export const api = {
  postOutcomes: endpoint('POST', '/api/v1/outcomes', postOutcomes),
  listOutcomes: endpoint('GET', '/api/v1/outcomes', listOutcomes),
  getOutcome: endpoint('GET', '/api/v1/outcomes/{id}', getOutcome),
  stateCheck: endpoint('POST', '/api/v1/outcomes/{id}/state-check', stateCheck),
  postApproval: endpoint('POST', '/api/v1/approvals', postApproval),
  listApprovals: endpoint('GET', '/api/v1/approvals', listApprovals),
  getApproval: endpoint('GET', '/api/v1/approvals/{id}', getApproval),
  decide: endpoint('POST', '/api/v1/approvals/{id}/decisions', decide),
  revoke: endpoint('POST', '/api/v1/approvals/{id}/revoke', revoke),
  withdraw: endpoint('POST', '/api/v1/approvals/{id}/withdraw', withdraw),
  redeem: endpoint('POST', '/api/v1/grants/{grantId}/redeem', redeem),
  incident: endpoint('GET', '/api/v1/incidents/{ref}', getIncident),
  me: endpoint('GET', '/api/v1/me', me),
  trust: endpoint('POST', '/api/v1/servers/trust', trust),
  evaluatePolicy: endpoint('POST', '/api/v1/policy/evaluate', evaluatePolicy),
  listTools: endpoint('GET', '/api/v1/tools', listTools),
  acceptTool: endpoint('POST', '/api/v1/tools/accept', acceptTool),
  checkGuard: endpoint('POST', '/api/v1/guards/check', checkGuard),
};

export type Reply = { status: number; headers: Headers; text: string; json: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export type CallOptions = {
  token: string;
  params?: Record<string, string>;
  /** A string is used as the query as is (already encoded); repeated keys as arrays. */
  query?: string | Record<string, string | string[]>;
  /** An object is sent as JSON; a string, bytes or a stream as they are. */
  body?: unknown;
  headers?: Record<string, string>;
};

// Encoding can fail (a lone surrogate): the handler reads params from the context, not the URL.
const segment = (v: string) => {
  try {
    return encodeURIComponent(v);
  } catch {
    return 'unencodable';
  }
};

function queryString(query: CallOptions['query']): string {
  if (query === undefined) return '';
  if (typeof query === 'string') return query ? `?${query}` : '';
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) for (const one of Array.isArray(v) ? v : [v]) search.append(k, one);
  const s = search.toString();
  return s ? `?${s}` : '';
}

export async function call(e: Endpoint, o: CallOptions): Promise<Reply> {
  const params = o.params ?? {};
  const path = e.path.replace(/\{(\w+)\}/g, (_m, name: string) => segment(params[name] ?? ''));
  const body =
    o.body === undefined ||
    typeof o.body === 'string' ||
    o.body instanceof Uint8Array ||
    o.body instanceof ReadableStream
      ? o.body
      : JSON.stringify(o.body);
  const init: RequestInit & { duplex?: 'half' } = {
    method: e.method,
    headers: {
      authorization: `Bearer ${o.token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    body: body as BodyInit | undefined,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  };
  const res = await e.handler(new Request(`http://127.0.0.1${path}${queryString(o.query)}`, init), {
    params: Promise.resolve(params as never),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Markdown, or nothing.
  }
  return { status: res.status, headers: res.headers, text, json };
}

// ── What a refusal looks like ──────────────────────────────────────────────────────────────

export const problemCodes = [
  'invalid_input',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'gone',
  'payload_too_large',
  'idempotency_key_required',
  'idempotency_key_reused',
  'arguments_required',
  'arguments_too_large',
  'arguments_digest_mismatch',
  'rate_limited',
  'unavailable',
];

const show = (r: Reply) => `${r.status} ${r.text.slice(0, 400)}`;

/** A problem+json refusal with one of `statuses`; with `path`, an error naming that field (or, `within`, a path inside it). */
export function expectProblem(r: Reply, statuses: number[], path?: string, { within = false } = {}) {
  expect(statuses, show(r)).toContain(r.status);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.json).toMatchObject({
    status: r.status,
    title: expect.any(String),
    detail: expect.any(String),
    type: `/problems/${r.json?.code}`,
  });
  expect(problemCodes).toContain(r.json.code);
  // No stack traces or database text, ever.
  expect(r.text).not.toMatch(/prisma|postgres|invalid input syntax|\bat \S+\.(?:ts|js|mjs):\d+/i);
  if (path === undefined) return;
  const named: string[] = (r.json.errors ?? []).map((e: { path: string }) => e.path);
  if (within)
    expect(
      named.some((p) => p === path || p.startsWith(`${path}.`)),
      show(r),
    ).toBe(true);
  else expect(named, show(r)).toContain(path);
}

export function expectOk(r: Reply, statuses = [200, 201]) {
  expect(statuses, show(r)).toContain(r.status);
}
