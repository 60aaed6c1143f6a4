// For the hostile-input tests (never imported by the app): the /api/v1 route handlers called
// in-process with real `Request` objects, valid bodies for each of them, and what a refusal must
// look like (API.md, "Errors"). Credentials are real API keys and personal tokens (bearer), so
// everything but Next's own routing runs as in production.
import fc from 'fast-check';
import { expect } from 'vitest';
import { GET as listOutcomes, POST as postOutcomes } from '@/app/api/v1/outcomes/route';
import { GET as getOutcome } from '@/app/api/v1/outcomes/[id]/route';
import { GET as listApprovals, POST as postApproval } from '@/app/api/v1/approvals/route';
import { GET as getApproval } from '@/app/api/v1/approvals/[id]/route';
import { POST as decide } from '@/app/api/v1/approvals/[id]/decisions/route';
import { POST as revoke } from '@/app/api/v1/approvals/[id]/revoke/route';
import { POST as redeem } from '@/app/api/v1/grants/[grantId]/redeem/route';
import { GET as getIncident } from '@/app/api/v1/incidents/[ref]/route';
import { GET as me } from '@/app/api/v1/me/route';
import { POST as trust } from '@/app/api/v1/servers/trust/route';
import { apiScopes } from '@/lib/credentials/scopes';
import { createApiKey, createPersonalToken } from '@/lib/server/data/credentials';
import { setPolicyRule } from '@/lib/server/data/policy-rules';
import { makeUser, uniq } from '@/testing/factories';
import { cli } from '@/lib/auth/actor';

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
  postApproval: endpoint('POST', '/api/v1/approvals', postApproval),
  listApprovals: endpoint('GET', '/api/v1/approvals', listApprovals),
  getApproval: endpoint('GET', '/api/v1/approvals/{id}', getApproval),
  decide: endpoint('POST', '/api/v1/approvals/{id}/decisions', decide),
  revoke: endpoint('POST', '/api/v1/approvals/{id}/revoke', revoke),
  redeem: endpoint('POST', '/api/v1/grants/{grantId}/redeem', redeem),
  incident: endpoint('GET', '/api/v1/incidents/{ref}', getIncident),
  me: endpoint('GET', '/api/v1/me', me),
  trust: endpoint('POST', '/api/v1/servers/trust', trust),
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

// ── Credentials and valid bodies ───────────────────────────────────────────────────────────

export const DIGEST = `sha256:${'ab12'.repeat(16)}`;
/** Requests to this server need no approval: their grant is issued at once (for redeem tests). */
export const AUTO_SERVER = 'fuzz-auto-mcp';

export type Actors = { key: string; admin: string; reviewer: string };

export async function makeActors(): Promise<Actors> {
  const key = await createApiKey(cli, { name: uniq('fuzz-key'), scopes: [...apiScopes] });
  const admin = await makeUser('admin');
  const reviewer = await makeUser('reviewer');
  const adminToken = await createPersonalToken(cli, admin.userId, 'fuzz');
  const reviewerToken = await createPersonalToken(cli, reviewer.userId, 'fuzz');
  const rule = await setPolicyRule(cli, { server: AUTO_SERVER, tool: null, requiredApprovals: 0 });
  if (!key.ok || !adminToken.ok || !reviewerToken.ok || !rule.ok) throw new Error('makeActors: set-up failed');
  return { key: key.value.secret, admin: adminToken.value.secret, reviewer: reviewerToken.value.secret };
}

/** An outcome record with every field the schema knows, sent and answered. */
export function fullRecord() {
  return {
    eventId: uniq('evt'),
    occurredAt: '2026-11-30T12:00:00Z',
    durationMs: 812,
    requestRef: uniq('req'),
    idempotencyKey: uniq('idem'),
    attempt: 1,
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    serverVersion: '2.3.0',
    protocolVersion: '2025-11-25',
    tool: {
      name: 'refund_payment',
      annotations: {
        title: 'Refund a payment',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    mcpRequestId: 'mcp-17',
    sessionId: uniq('sess'),
    grantId: uniq('grt'),
    argsDigest: DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
    observed: {
      sent: true,
      httpStatus: 401,
      authError: 'invalid_token',
      jsonRpcErrorCode: -32000,
      clientError: 'timeout',
      result: { isError: true, errorCategory: 'validation', outputValidation: 'invalid' },
    },
  };
}

/** The fields only a record that was never sent may carry. */
export function blockedRecord() {
  return { ...fullRecord(), observed: { sent: false, clientBlock: 'approval_required' } };
}

export function approvalBody(over: Record<string, unknown> = {}) {
  return {
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: {
      name: 'refund_payment',
      annotations: {
        title: 'Refund a payment',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    argsDigest: DIGEST,
    summary: 'Refund 40.00 EUR on order 4411',
    resource: { type: 'order', id: 'order-4411' },
    pendingTtlSeconds: 3600,
    grantTtlSeconds: 900,
    ...over,
  };
}

export async function newApproval(
  actors: Actors,
  over: Record<string, unknown> = {},
): Promise<{ id: string; grantId: string | null }> {
  const r = await call(api.postApproval, {
    token: actors.key,
    body: approvalBody(over),
    headers: { 'idempotency-key': uniq('idem') },
  });
  expectOk(r, [201]);
  return { id: r.json.id, grantId: r.json.grant?.id ?? null };
}

/** A live grant for `redeemBody()`. */
export async function newGrant(actors: Actors): Promise<string> {
  const { grantId } = await newApproval(actors, { server: AUTO_SERVER });
  if (!grantId) throw new Error('newGrant: the policy rule did not issue a grant');
  return grantId;
}

export const redeemBody = () => ({ server: AUTO_SERVER, tool: 'refund_payment', argsDigest: DIGEST });

// ── Hostile text ─────────────────────────────────────────────────────────────────────────

// What PostgreSQL cannot store (NUL) or what is not Unicode at all (half a surrogate pair), and
// what is legal but easy to get wrong: bidi overrides, zero-width and invisible characters,
// emoji sequences, stacked combining marks, line and paragraph separators, noncharacters.
export const UNSTORABLE = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b'];
export const AWKWARD = [
  '\u202e',
  '\u202d',
  '\u2066',
  '\u2069',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u061c',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇫🇷',
  '\u{1f600}',
  'e\u0301\u0301\u0301\u0301',
  'Z\u0351\u0352\u0353\u0354\u0355',
  '\u2028',
  '\u2029',
  '\u0085',
  '\uffff',
  '\ufffe',
  '\u{10ffff}',
  '\r\n',
  '\t',
  '\u001b[31m',
  'Set-Cookie: a=b',
  '"',
  "'",
  '\\',
  '<script>',
  '%00',
  'ǅ',
  'ß',
  'İ',
];
export const hostileText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...AWKWARD) },
      { weight: 1, arbitrary: fc.constantFrom(...UNSTORABLE) },
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''))
  .filter((s) => s.length > 0);
export const unstorable = (s: string) =>
  s.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

// ── JSON paths ─────────────────────────────────────────────────────────────────────────────

export type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';
export const jsonType = (v: unknown): JsonType =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as JsonType);

/** Every path under `value` (objects and arrays included), dotted as problem+json names them. */
export function paths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const p = prefix ? `${prefix}.${k}` : k;
    return [p, ...paths(v, p)];
  });
}

export function getAt(value: unknown, path: string): unknown {
  return path ? path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], value) : value;
}

/** A copy of `value` with `path` set to `to` (an own, enumerable property even for `__proto__`). */
export function setAt<T>(value: T, path: string, to: unknown): T {
  const copy = structuredClone(value);
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = getAt(copy, keys.join('.')) as Record<string, unknown>;
  Object.defineProperty(parent, last, { value: to, enumerable: true, writable: true, configurable: true });
  return copy;
}
