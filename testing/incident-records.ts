// Test support for lib/incidents: small incident stories, classified by the real classifier, and
// tables of the findings a story must yield.
import { classifyOutcome } from '@/lib/outcomes/classify';
import type { Observed } from '@/lib/outcomes/schemas';
import { expect, it } from 'vitest';
import { detectFindings } from '@/lib/incidents/findings';
import type { IncidentApproval } from '@/lib/incidents/timeline';
import type { FindingKind, IncidentPolicy, IncidentRecord } from '@/lib/incidents/types';

const toolError = (errorCategory?: string): Observed => ({
  sent: true,
  httpStatus: 200,
  result: { isError: true, errorCategory },
});
const rpc = (jsonRpcErrorCode: number): Observed => ({ sent: true, httpStatus: 200, jsonRpcErrorCode });

export const OBSERVED = {
  ok: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
  schemaViolation: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'invalid' } },
  forbidden: { sent: true, httpStatus: 403, authError: 'insufficient_scope' },
  unauthenticated: { sent: true, httpStatus: 401, authError: 'invalid_token' },
  sessionExpired: { sent: true, httpStatus: 404 },
  rateLimited: { sent: true, httpStatus: 429 },
  upstream: { sent: true, httpStatus: 502 },
  denied: toolError('DENIED'),
  permissionDenied: toolError('PERMISSION_DENIED'),
  validation: toolError('VALIDATION_ERROR'),
  notFound: toolError('NOT_FOUND'),
  conflict: toolError('REVISION_CONFLICT'),
  protocol: rpc(-32601),
  invalidArgs: rpc(-32602),
  inputRequired: rpc(-32042),
  timeout: { sent: true, clientError: 'timeout' },
  connectionLost: { sent: true, clientError: 'connection_lost' },
  approvalRequired: { sent: false, clientBlock: 'approval_required' },
  deniedByPolicy: { sent: false, clientBlock: 'denied_by_policy' },
  noCredentials: { sent: false, clientBlock: 'no_credentials' },
} satisfies Record<string, Observed>;

export type Step = {
  obs: keyof typeof OBSERVED;
  tool?: string;
  server?: string;
  /** The tool's readOnlyHint. */
  read?: boolean;
  /** Whether its server is trusted (default true). */
  trusted?: boolean;
  /** Seconds after the story starts; default: the step's index. */
  at?: number;
  /** Receipt order; default: the step's index. */
  seq?: number;
  key?: string;
  /** Stands for the arguments; null: no digest. */
  args?: string | null;
  grant?: string;
  principal?: string;
  org?: string;
  ref?: string;
  attempt?: number;
  summary?: string | null;
  id?: string;
};

export const T0 = Date.parse('2026-11-30T12:00:00Z');

/** Records "a", "b", "c"… in the order given, one second apart unless told otherwise. */
export function story(...steps: Step[]): IncidentRecord[] {
  return steps.map((s, i) => {
    const name = s.tool ?? 'refund_payment';
    const annotations = { readOnlyHint: s.read ?? false };
    return {
      id: s.id ?? String.fromCharCode(97 + i),
      occurredAt: new Date(T0 + (s.at ?? i) * 1000),
      seq: s.seq ?? i,
      requestRef: s.ref ?? 'req_1',
      idempotencyKey: s.key ?? null,
      attempt: s.attempt ?? null,
      organization: s.org ?? 'acme',
      principal: s.principal ?? 'user_1',
      agent: 'support-bot',
      server: s.server ?? 'billing-mcp',
      tool: { name, annotations },
      argsDigest: s.args === null ? null : `sha256:${s.args ?? 'args-1'}`,
      grantId: s.grant ?? null,
      summary: s.summary === undefined ? `Call ${name}` : s.summary,
      classification: classifyOutcome({
        observed: OBSERVED[s.obs],
        annotations,
        serverTrusted: s.trusted ?? true,
        toolName: name,
      }),
    };
  });
}

/** The recordIds of every finding of one kind. */
export function foundFindings(
  kind: FindingKind,
  records: IncidentRecord[],
  policy?: Partial<IncidentPolicy>,
): string[][] {
  return detectFindings(records, policy)
    .filter((f) => f.kind === kind)
    .map((f) => f.recordIds);
}

export type FindingCase = [name: string, steps: Step[], expected: string[][], policy?: Partial<IncidentPolicy>];

/** One test per case: the story's findings of `kind`, as recordIds. */
export function findingTable(kind: FindingKind, cases: FindingCase[]) {
  it.each(cases)('%s', (_name, steps, expected, policy) => {
    expect(foundFindings(kind, story(...steps), policy)).toEqual(expected);
  });
}

export const adminTool = { tool: 'admin_refund_any' } as const;
export const readStep = (tool = 'list_refunds', server = 'billing-mcp') => ({ tool, server, read: true }) as const;

// ── Approvals ───────────────────────────────────────────────────────────────────────────────

/** T0 plus this many seconds. */
export const atSeconds = (seconds: number) => new Date(T0 + seconds * 1000);

/** An approval request of the incident, pending unless told otherwise. */
export function incidentApproval(over: Partial<IncidentApproval> = {}): IncidentApproval {
  return {
    id: 'apr_1',
    createdAt: atSeconds(0),
    status: 'pending',
    expiresAt: atSeconds(3600),
    requestedBy: 'API key "gateway"',
    organization: 'acme',
    principal: 'user_193',
    agent: 'support-bot',
    server: 'billing-mcp',
    tool: 'refund_payment',
    summary: 'Refund 40.00 EUR on order 4411',
    requiredApprovals: 2,
    resource: { type: 'order', id: '4411' },
    decisions: [],
    revoked: null,
    grant: null,
    ...over,
  };
}

export const incidentGrant = (
  over: Partial<NonNullable<IncidentApproval['grant']>> = {},
): NonNullable<IncidentApproval['grant']> => ({
  id: 'grt_1',
  issuedAt: atSeconds(20),
  expiresAt: atSeconds(920),
  redeemedAt: null,
  redeemedBy: null,
  revokedAt: null,
  ...over,
});

/** Approved by two reviewers (decisions out of order on purpose), its grant redeemed. */
export const approvedTwice = incidentApproval({
  status: 'redeemed',
  decisions: [
    { reviewer: 'rita@example.test', decision: 'approve', reason: 'second look', at: atSeconds(20) },
    { reviewer: 'rui@example.test', decision: 'approve', reason: 'order checked', at: atSeconds(10) },
  ],
  grant: incidentGrant({ redeemedAt: atSeconds(30), redeemedBy: 'API key "executor"' }),
});
