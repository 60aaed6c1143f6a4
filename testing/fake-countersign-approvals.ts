// The approvals and grants of the fake console (fake-countersign.ts): idempotent staging (same key
// and body: the first answer again, `Idempotent-Replayed: true`; other body: 422
// idempotency_key_reused), requiredApprovals from the console's own policy rules, a grant at once
// when none is needed, people deciding on the first poll (`decide`), all approvals at once.
// Arguments as the console takes them (docs/api.md "Approvals and grants"): required, checked
// against argsDigest with the console's own check, kept masked until the request ends; the agent
// reading its request gets none (reviewers only), as an API key does from the console.
import { randomUUID } from 'node:crypto';
import { requiredApprovalsFor, WHOLE_SERVER } from '@/lib/approvals/policy';
import { approvalRequestSchema, type ApprovalRequestBody } from '@/lib/approvals/schemas';
import { checkArguments, maskArguments, type JsonObject } from '@/lib/approvals/arguments';
import { canonicalJson } from '@/lib/json/canonical';
import { guardCheckOf, type GuardAnswer, type GuardCheck } from '@/lib/guards/schemas';
import { invalid, json, problem } from './fake-countersign-responses';

export type Decision = 'approve' | 'deny' | 'never';

export interface FakeApproval {
  id: string;
  idempotencyKey: string;
  body: ApprovalRequestBody;
  /** The first answer, replayed as it was. */
  created: Record<string, unknown>;
  content: string;
  requiredApprovals: number;
  status: 'pending' | 'approved' | 'denied' | 'redeemed' | 'revoked';
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
  /** The arguments as a reviewer would see them (masked), erased when the request ends. */
  arguments: JsonObject | null;
  /** Why `arguments` is null. */
  argumentsNote: string | null;
  /** Withdrawn by the agent that staged it (the console's revocation). */
  revoked?: { at: string; by: string; reason: string } | null;
}

export type FakePolicy = {
  /** Servers whose annotations are trusted (`servers:trust`). */
  trustedServers?: string[];
  /** Admin rules (`policy:set`); `tool: null` is a whole-server rule. */
  rules?: { server: string; tool: string | null; requiredApprovals: number }[];
  /** `COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS` (default on). */
  requireArguments?: boolean;
};

/** What the guards are asked with a staging: the call, without the records sent along. */
export type GuardQuestion = Omit<GuardCheck, 'records'>;

export function fakeApprovals(
  options: {
    decide?: (approval: FakeApproval) => Decision;
    guard?: (question: GuardQuestion) => GuardAnswer;
  } & FakePolicy,
) {
  const approvals = new Map<string, FakeApproval>();
  /** The guards' questions received with stagings, in order. */
  const guardChecks: GuardQuestion[] = [];
  const byKey = new Map<string, FakeApproval>();

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
    tool: {
      name: a.body.tool.name,
      annotations: a.body.tool.annotations ?? null,
      description: a.body.tool.description ?? null,
    },
    annotationsTrusted: a.annotationsTrusted,
    argsDigest: a.body.argsDigest,
    summary: a.body.summary,
    resource: a.body.resource ?? null,
    grantTtlSeconds: a.body.grantTtlSeconds ?? 900,
    createdAt: a.createdAt,
    decidedAt: a.decidedAt,
    revoked: a.revoked ?? null,
    argumentsSent: a.body.arguments != null,
    arguments: null,
    argumentsNote: a.argumentsNote ?? 'reviewers only',
    argumentsPreview: null,
  });
  // In the same step that makes the request terminal, as the console's trigger does.
  const erase = (a: FakeApproval, why: string, at: string) => {
    if (a.arguments) Object.assign(a, { arguments: null, argumentsNote: `erased when ${why} at ${at}` });
  };
  const decide = (a: FakeApproval, decision: 'approve' | 'deny') => {
    const count = decision === 'approve' ? a.requiredApprovals : 1;
    for (let i = 1; i <= count; i++)
      a.decisions.push({ reviewer: `reviewer${i}@fake.test`, decision, reason: '', at: now() });
    Object.assign(a, { version: a.version + count, decidedAt: now() });
    if (decision === 'deny') {
      a.status = 'denied';
      erase(a, 'denied', a.decidedAt!);
    } else Object.assign(a, { status: 'approved', grantId: randomUUID(), grantIssuedAt: now() });
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

  /** `POST /api/v1/approvals` with this Idempotency-Key. */
  function stage(key: string, raw: unknown): Response {
    const parsed = approvalRequestSchema.safeParse(raw);
    if (!parsed.success) return invalid(parsed.error.issues);
    const body = parsed.data;
    if (body.arguments == null) {
      if (options.requireArguments !== false)
        return problem(422, 'arguments_required', [
          { path: 'arguments', message: 'arguments are required: send the arguments the tool will be called with' },
        ]);
    } else {
      const checked = checkArguments(body.arguments, body.argsDigest);
      if (!checked.ok) return problem(422, checked.code, [{ path: checked.path, message: checked.message }]);
    }
    // As the console: the guards asked first; a refusal stages nothing (their own decisions are
    // the real console's, tested there: here a test scripts them).
    const { guard, ...request } = body;
    if (guard) {
      const { records: _sentAlong, ...question } = guardCheckOf(body, guard);
      guardChecks.push(question);
      const answer = options.guard?.(question);
      if (answer?.decision === 'refuse') return json(200, { guard: answer });
    }
    // As the console: null members and absent ones are the same request, and the guard's question is no part of it.
    const content = canonicalJson(request, { nullMembers: 'omit' });
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
      arguments: body.arguments ? maskArguments(body.arguments as JsonObject) : null,
      argumentsNote: body.arguments ? null : 'not sent by the agent',
    };
    // `POST /api/v1/approvals` answers fewer fields than a read.
    const { id, status, expiresAt, version } = approval;
    const grant = approval.grantId ? { id: approval.grantId, expiresAt: grantExpiry(approval) } : null;
    approval.created = { id, status, requiredApprovals, expiresAt, version, grant };
    approvals.set(approval.id, approval);
    byKey.set(key, approval);
    return json(201, approval.created);
  }

  /** `GET /api/v1/approvals/{id}`: people decide between the request and the first poll. */
  function read(id: string): Response {
    const approval = approvals.get(id);
    if (!approval) return problem(404, 'not_found');
    if (approval.status === 'pending') {
      const decision = options.decide?.(approval) ?? 'approve';
      if (decision !== 'never') decide(approval, decision);
    }
    return json(200, view(approval));
  }

  /** `POST /api/v1/grants/{id}/redeem`: once, for the server, tool and digest it was granted for. */
  function redeem(grantId: string, body: { argsDigest?: unknown; tool?: unknown; server?: unknown }): Response {
    const approval = [...approvals.values()].find((a) => a.grantId === grantId);
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
    erase(approval, 'its grant was redeemed', redeemedAt);
    approval.redemptions++;
    const { server, tool, argsDigest } = body;
    return json(200, { grantId: approval.grantId, approvalId: approval.id, redeemedAt, server, tool, argsDigest });
  }

  /** `POST /api/v1/approvals/{id}/withdraw` by the (one) agent key: its pending request becomes revoked. */
  function withdraw(id: string, body: { reason?: unknown }): Response {
    const approval = approvals.get(id);
    if (!approval) return problem(404, 'not_found');
    const reason = typeof body?.reason === 'string' ? body.reason.trim() : '';
    if (!reason) return problem(422, 'invalid_input', [{ path: 'reason', message: 'is required' }]);
    if (approval.status !== 'pending') return problem(409, 'conflict');
    const at = now();
    Object.assign(approval, {
      status: 'revoked',
      version: approval.version + 1,
      revoked: { at, by: 'api_key:fake', reason },
    });
    erase(approval, 'revoked', at);
    return json(200, view(approval));
  }

  return { approvals, guardChecks, stage, read, redeem, withdraw };
}
