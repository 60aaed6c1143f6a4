// An in-process stand-in for Countersign's approvals, grants and outcomes API (docs/api.md), for the
// integration tests of lib/mcp: the wrapper takes it as its `fetch`. It answers what the real
// console answers (lib/mcp/fake-countersign.test.ts sends the same requests to both and compares):
// idempotent staging (same key and body: the first answer again, `Idempotent-Replayed: true`;
// other body: 422 idempotency_key_reused), requiredApprovals from the console's own policy rules,
// a grant at once when none is needed, problem+json refusals. What it does not model: people
// decide on the first poll (`decide`), all approvals at once.
import { randomUUID } from 'node:crypto';
import { requiredApprovalsFor, WHOLE_SERVER } from '@/lib/approvals/policy';
import { approvalRequestSchema, type ApprovalRequestBody } from '@/lib/approvals/schemas';
import { canonicalJson } from '@/lib/json/canonical';
import { outcomeBatchSchema, type Outcome } from '@/lib/outcomes/schemas';
import { classifyRecord, CLASSIFIER_VERSION } from '@/lib/outcomes/classify';
import { resolvedNextStep, stateCheckBodySchema, type Resolution } from '@/lib/outcomes/resolution';
import type { Classification } from '@/lib/outcomes/schemas';

export type Decision = 'approve' | 'deny' | 'never';

export interface FakeApproval {
  id: string;
  idempotencyKey: string;
  body: ApprovalRequestBody;
  /** The first answer, replayed as it was. */
  created: Record<string, unknown>;
  content: string;
  requiredApprovals: number;
  status: 'pending' | 'approved' | 'denied' | 'redeemed';
  /** Counts changes, as the console's does: each decision and the redemption add one. */
  version: number;
  grantId: string | null;
  expiresAt: string;
  createdAt: string;
  decidedAt: string | null;
  grantIssuedAt: string | null;
  redeemedAt: string | null;
  decisions: { reviewer: string; decision: 'approve' | 'deny'; reason: string; at: string }[];
  annotationsTrusted: boolean;
  redemptions: number;
}

export type FakePolicy = {
  /** Servers whose annotations are trusted (`servers:trust`). */
  trustedServers?: string[];
  /** Admin rules (`policy:set`); `tool: null` is a whole-server rule. */
  rules?: { server: string; tool: string | null; requiredApprovals: number }[];
};

export function fakeCountersign(options: { decide?: (approval: FakeApproval) => Decision } & FakePolicy = {}) {
  const outcomes: Outcome[] = [];
  // What the console stores per record: its id, classification, and a resolution once checked.
  type Stored = {
    id: string;
    record: Outcome;
    delivery: string;
    classification: Classification;
    trusted: boolean;
    receivedAt: string;
    resolution: Resolution | null;
  };
  const stored = new Map<string, Stored>();
  // The record as GET /api/v1/outcomes/{id} shows it (lib/outcomes/views.ts outcomeViewSchema);
  // unlike the console, the fake masks nothing.
  const outcomeView = (s: Stored) => {
    const r = s.record;
    return {
      id: s.id,
      eventId: r.eventId,
      occurredAt: r.occurredAt,
      durationMs: r.durationMs ?? null,
      requestRef: r.requestRef,
      idempotencyKey: r.idempotencyKey ?? null,
      attempt: r.attempt ?? null,
      organization: r.organization,
      principal: r.principal,
      agent: r.agent ?? null,
      server: r.server,
      serverVersion: r.serverVersion ?? null,
      protocolVersion: r.protocolVersion ?? null,
      tool: { name: r.tool.name, annotations: r.tool.annotations ?? null },
      mcpRequestId: r.mcpRequestId ?? null,
      grantId: r.grantId ?? null,
      argsDigest: r.argsDigest ?? null,
      summary: r.summary ?? null,
      observed: r.observed,
      classification: s.resolution
        ? { ...s.classification, nextStep: resolvedNextStep(s.resolution) }
        : s.classification,
      annotationsTrusted: s.trusted,
      receivedAt: s.receivedAt,
      classifierVersion: CLASSIFIER_VERSION,
      resolution: s.resolution,
    };
  };
  const storedById = new Map<string, string>();
  const approvals = new Map<string, FakeApproval>();
  const byKey = new Map<string, FakeApproval>();
  let down = false;

  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  const problem = (status: number, code: string, errors?: { path: string; message: string }[]) =>
    new Response(
      JSON.stringify({
        type: `/problems/${code}`,
        title: code,
        status,
        detail: code,
        code,
        ...(errors ? { errors } : {}),
      }),
      { status, headers: { 'content-type': 'application/problem+json' } },
    );
  const invalid = (issues: { path: PropertyKey[]; message: string }[]) =>
    problem(
      422,
      'invalid_input',
      issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    );
  const now = () => new Date().toISOString();
  const later = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
  const grantExpiry = (a: FakeApproval) => later(a.body.grantTtlSeconds ?? 900);
  const grantOf = (a: FakeApproval) =>
    a.grantId
      ? {
          id: a.grantId,
          issuedAt: a.grantIssuedAt,
          expiresAt: grantExpiry(a),
          redeemedAt: a.redeemedAt,
          revokedAt: null,
          state: a.redeemedAt ? 'redeemed' : 'active',
        }
      : null;
  // `GET /api/v1/approvals/{id}`: the fields of the console's ApprovalView.
  const view = (a: FakeApproval) => ({
    id: a.id,
    status: a.status,
    requiredApprovals: a.requiredApprovals,
    decisions: a.decisions,
    version: a.version,
    expiresAt: a.expiresAt,
    grant: grantOf(a),
    requestRef: a.body.requestRef,
    idempotencyKey: a.idempotencyKey,
    organization: a.body.organization,
    principal: a.body.principal,
    agent: a.body.agent ?? null,
    server: a.body.server,
    tool: { name: a.body.tool.name, annotations: a.body.tool.annotations ?? null },
    annotationsTrusted: a.annotationsTrusted,
    argsDigest: a.body.argsDigest,
    summary: a.body.summary,
    resource: a.body.resource ?? null,
    grantTtlSeconds: a.body.grantTtlSeconds ?? 900,
    createdAt: a.createdAt,
    decidedAt: a.decidedAt,
    revoked: null,
  });
  const decide = (a: FakeApproval, decision: 'approve' | 'deny') => {
    const count = decision === 'approve' ? a.requiredApprovals : 1;
    for (let i = 1; i <= count; i++)
      a.decisions.push({ reviewer: `reviewer${i}@fake.test`, decision, reason: '', at: now() });
    Object.assign(a, { version: a.version + count, decidedAt: now() });
    if (decision === 'deny') a.status = 'denied';
    else Object.assign(a, { status: 'approved', grantId: randomUUID(), grantIssuedAt: now() });
  };
  const required = (body: ApprovalRequestBody) =>
    requiredApprovalsFor({
      toolName: body.tool.name,
      annotations: body.tool.annotations,
      serverTrusted: options.trustedServers?.includes(body.server) ?? false,
      rules: (options.rules ?? [])
        .filter((r) => r.server === body.server)
        .map((r) => ({ toolName: r.tool ?? WHOLE_SERVER, requiredApprovals: r.requiredApprovals })),
    }).requiredApprovals;

  function stage(key: string, raw: unknown): Response {
    const parsed = approvalRequestSchema.safeParse(raw);
    if (!parsed.success) return invalid(parsed.error.issues);
    const body = parsed.data;
    // As the console: null members and absent ones are the same request.
    const content = canonicalJson(body, { nullMembers: 'omit' });
    const existing = byKey.get(key);
    if (existing) {
      if (existing.content !== content) return problem(422, 'idempotency_key_reused');
      return json(201, existing.created, { 'idempotent-replayed': 'true' });
    }
    const requiredApprovals = required(body);
    const born = requiredApprovals === 0;
    const approval: FakeApproval = {
      id: randomUUID(),
      idempotencyKey: key,
      body,
      created: {},
      content,
      requiredApprovals,
      status: born ? 'approved' : 'pending',
      version: 1,
      grantId: born ? randomUUID() : null,
      expiresAt: later(body.pendingTtlSeconds ?? 3600),
      createdAt: now(),
      decidedAt: born ? now() : null,
      grantIssuedAt: born ? now() : null,
      redeemedAt: null,
      decisions: [],
      annotationsTrusted: options.trustedServers?.includes(body.server) ?? false,
      redemptions: 0,
    };
    // `POST /api/v1/approvals` answers fewer fields than a read.
    const { id, status, expiresAt, version } = approval;
    const grant = approval.grantId ? { id: approval.grantId, expiresAt: grantExpiry(approval) } : null;
    approval.created = { id, status, requiredApprovals, expiresAt, version, grant };
    approvals.set(approval.id, approval);
    byKey.set(key, approval);
    return json(201, approval.created);
  }

  const fetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (down)
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    const url = new URL(input);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : null;
    const headers = new Headers(init?.headers);
    if (!headers.get('authorization')?.startsWith('Bearer ')) return problem(401, 'unauthenticated');

    if (method === 'POST' && url.pathname === '/api/v1/outcomes') {
      const parsed = outcomeBatchSchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      outcomes.push(...parsed.data.records);
      const trusted = new Set(options.trustedServers ?? []);
      const records = parsed.data.records.map((r) => {
        let s = stored.get(r.eventId);
        const classification = classifyRecord(r, trusted.has(r.server));
        if (!s) {
          s = {
            id: randomUUID(),
            record: r,
            delivery: classification.delivery,
            classification,
            trusted: trusted.has(r.server),
            receivedAt: now(),
            resolution: null,
          };
          stored.set(r.eventId, s);
          storedById.set(s.id, r.eventId);
        }
        return { eventId: r.eventId, id: s.id, classification };
      });
      return json(200, { accepted: parsed.data.records.length, duplicates: 0, records });
    }
    const check = /^\/api\/v1\/outcomes\/([^/]+)\/state-check$/.exec(url.pathname);
    if (method === 'POST' && check) {
      const eventId = storedById.get(check[1]);
      const s = eventId ? stored.get(eventId) : undefined;
      if (!s) return problem(404, 'not_found');
      const parsed = stateCheckBodySchema.safeParse(body);
      if (!parsed.success) return invalid(parsed.error.issues);
      if (s.delivery !== 'unknown' || s.resolution) return problem(409, 'conflict');
      s.resolution = {
        by: 'state_check',
        verdict: parsed.data.verdict,
        at: new Date(),
        who: 'API key',
        note: parsed.data.note,
      };
      return json(200, outcomeView(s));
    }
    if (method === 'POST' && url.pathname === '/api/v1/approvals') {
      const key = headers.get('idempotency-key');
      if (!key?.trim()) return problem(400, 'idempotency_key_required');
      return stage(key, body);
    }
    const get = /^\/api\/v1\/approvals\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && get) {
      const approval = approvals.get(get[1]);
      if (!approval) return problem(404, 'not_found');
      // People decide between the request and the first poll.
      if (approval.status === 'pending') {
        const decision = options.decide?.(approval) ?? 'approve';
        if (decision !== 'never') decide(approval, decision);
      }
      return json(200, view(approval));
    }
    const redeem = /^\/api\/v1\/grants\/([^/]+)\/redeem$/.exec(url.pathname);
    if (method === 'POST' && redeem) {
      const approval = [...approvals.values()].find((a) => a.grantId === redeem[1]);
      if (!approval) return problem(404, 'not_found');
      if (approval.status === 'redeemed') return problem(409, 'conflict');
      if (
        approval.body.argsDigest !== body.argsDigest ||
        approval.body.tool.name !== body.tool ||
        approval.body.server !== body.server
      ) {
        return problem(422, 'invalid_input');
      }
      const redeemedAt = now();
      Object.assign(approval, { status: 'redeemed', redeemedAt, version: approval.version + 1 });
      approval.redemptions++;
      const { server, tool, argsDigest } = body;
      return json(200, { grantId: approval.grantId, approvalId: approval.id, redeemedAt, server, tool, argsDigest });
    }
    return problem(404, 'not_found');
  };

  return {
    fetch,
    outcomes,
    approvals,
    /** The resolution each record got from a state check, by eventId. */
    resolutionOf: (eventId: string) => stored.get(eventId)?.resolution ?? null,
    setDown(value: boolean) {
      down = value;
    },
  };
}
