// An approval request as people and machines see it (docs/api.md, "Approvals and grants"), and the
// sentences that explain its state. Pure: the data layer maps rows into this shape.
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import type { JsonObject, PreviewField } from './arguments-format';
import type { ApprovalStatus, DecisionKind } from './schemas';

export type DecisionView = { reviewer: string; decision: DecisionKind; reason: string; at: Date };

/**
 * A grant's own state: a grant that lapsed unused leaves its request `approved` (that is what
 * the reviewers decided) and reads `expired` here.
 */
export type GrantState = 'active' | 'redeemed' | 'revoked' | 'expired';
export type GrantView = {
  id: string;
  issuedAt: Date;
  expiresAt: Date;
  redeemedAt: Date | null;
  revokedAt: Date | null;
  state: GrantState;
};

export type ApprovalView = {
  id: string;
  /** Effective status: a pending request past expiresAt (database clock) reads `expired`. */
  status: ApprovalStatus;
  requiredApprovals: number;
  decisions: DecisionView[];
  version: number;
  expiresAt: Date;
  grant: GrantView | null;
  requestRef: string;
  idempotencyKey: string;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  /** `description`: as the tool's server declared it (masked), when the stager sent it. */
  tool: { name: string; annotations: ToolAnnotations | null; description: string | null };
  /** Whether the server was trusted when the request arrived: only then did policy believe the hints. */
  annotationsTrusted: boolean;
  argsDigest: string;
  /** Whether the stager sent the tool's arguments (docs/design.md "What a reviewer sees: what will run"). */
  argumentsSent: boolean;
  /**
   * The arguments the grant is bound to, masked: only for reviewers and admins, only while the
   * request is open (pending, or approved with a live grant), and only one request at a time (a
   * list carries null here and `argumentsPreview`). Otherwise null, and `argumentsNote` says why.
   */
  arguments: JsonObject | null;
  argumentsNote: string | null;
  /** The queue row's fields of the arguments, on the same terms (lib/approvals/arguments-format.ts). */
  argumentsPreview: PreviewField[] | null;
  summary: string;
  resource: { type: string; id: string } | null;
  grantTtlSeconds: number;
  createdAt: Date;
  decidedAt: Date | null;
  revoked: { at: Date; by: string; reason: string } | null;
};

/** The row fields the view needs, as stored. */
export type ApprovalRow = Omit<
  ApprovalView,
  'status' | 'grant' | 'tool' | 'resource' | 'revoked' | 'arguments' | 'argumentsNote' | 'argumentsPreview'
> & {
  status: ApprovalStatus;
  toolName: string;
  toolAnnotations: unknown;
  toolDescription: string | null;
  resourceType: string | null;
  resourceId: string | null;
  revokedAt: Date | null;
  revokedBy: string | null;
  revokeReason: string | null;
  grant: Omit<GrantView, 'state'> | null;
};

export function effectiveStatus(status: ApprovalStatus, expiresAt: Date, now: Date): ApprovalStatus {
  return status === 'pending' && expiresAt <= now ? 'expired' : status;
}

export function grantState(g: Omit<GrantView, 'state'>, now: Date): GrantState {
  return g.redeemedAt ? 'redeemed' : g.revokedAt ? 'revoked' : g.expiresAt <= now ? 'expired' : 'active';
}

/**
 * `now` is the database's clock, read by the caller. The arguments as anyone but a reviewer sees
 * them (null, and why): the data layer fills them in for those who may read them.
 */
export function toApprovalView(r: ApprovalRow, now: Date): ApprovalView {
  const view: ApprovalView = {
    id: r.id,
    status: effectiveStatus(r.status, r.expiresAt, now),
    requiredApprovals: r.requiredApprovals,
    decisions: r.decisions,
    version: r.version,
    expiresAt: r.expiresAt,
    grant: r.grant && { ...r.grant, state: grantState(r.grant, now) },
    requestRef: r.requestRef,
    idempotencyKey: r.idempotencyKey,
    organization: r.organization,
    principal: r.principal,
    agent: r.agent,
    server: r.server,
    tool: {
      name: r.toolName,
      annotations: (r.toolAnnotations as ToolAnnotations | null) ?? null,
      description: r.toolDescription,
    },
    annotationsTrusted: r.annotationsTrusted,
    argsDigest: r.argsDigest,
    argumentsSent: r.argumentsSent,
    arguments: null,
    argumentsNote: null,
    argumentsPreview: null,
    summary: r.summary,
    resource: r.resourceType != null && r.resourceId != null ? { type: r.resourceType, id: r.resourceId } : null,
    grantTtlSeconds: r.grantTtlSeconds,
    createdAt: r.createdAt,
    decidedAt: r.decidedAt,
    revoked: r.revokedAt ? { at: r.revokedAt, by: r.revokedBy ?? 'unknown', reason: r.revokeReason ?? '' } : null,
  };
  return { ...view, argumentsNote: argumentsAbsence(view, false) };
}

/**
 * Why the arguments are not shown to a reader (docs/api.md "Approvals and grants",
 * `argumentsNote`), or null when they are: never sent; erased as the request became terminal or
 * its grant lapsed unused (whether or not the sweep has run: the database erases them then); not
 * a reader who may see them (`mayRead`: reviewers and admins).
 */
export function argumentsAbsence(v: ApprovalView, mayRead: boolean): string | null {
  if (!v.argumentsSent) return 'not sent by the agent';
  const erased = erasedNote(v);
  if (erased) return erased;
  return mayRead ? null : 'reviewers only';
}

function erasedNote(v: ApprovalView): string | null {
  switch (v.status) {
    case 'pending':
      return null;
    case 'approved':
      if (v.grant?.state === 'active') return null;
      return v.grant ? `erased when its grant expired at ${iso(v.grant.expiresAt)}` : 'erased';
    case 'denied':
      return v.decidedAt ? `erased when denied at ${iso(v.decidedAt)}` : 'erased when denied';
    case 'expired':
      return `erased when it expired at ${iso(v.expiresAt)}`;
    case 'revoked':
      return v.revoked ? `erased when revoked at ${iso(v.revoked.at)}` : 'erased when revoked';
    case 'redeemed':
      return v.grant?.redeemedAt
        ? `erased when its grant was redeemed at ${iso(v.grant.redeemedAt)}`
        : 'erased when its grant was redeemed';
  }
}

const iso = (d: Date) => d.toISOString();
const pastTense: Record<DecisionKind, string> = { approve: 'approved', deny: 'denied' };

export function describeDecisions(decisions: readonly DecisionView[], when: (d: Date) => string = iso): string {
  return decisions.map((d) => `${pastTense[d.decision]} by ${d.reviewer} at ${when(d.at)}`).join('; ');
}

/**
 * Why a request no longer takes decisions, naming who decided what and when: the body of the
 * conflict a reviewer gets when someone else was faster. Times in ISO 8601 unless `when` formats them for people.
 */
export function describeSettled(v: ApprovalView, when: (d: Date) => string = iso): string {
  const approvals = v.decisions.filter((d) => d.decision === 'approve').length;
  switch (v.status) {
    case 'approved':
      return `Already approved: ${describeDecisions(v.decisions, when)}.`;
    case 'redeemed':
      return `Already approved (${describeDecisions(v.decisions, when)}) and its grant redeemed at ${when(v.grant!.redeemedAt!)}.`;
    case 'denied': {
      const denial = v.decisions.find((d) => d.decision === 'deny');
      return denial
        ? `Already denied by ${denial.reviewer} at ${when(denial.at)}: "${denial.reason}".`
        : `Already denied${v.decidedAt ? ` at ${when(v.decidedAt)}` : ''}.`;
    }
    case 'expired':
      return `Expired at ${when(v.expiresAt)} with ${approvals} of ${v.requiredApprovals} approvals${v.decisions.length ? ` (${describeDecisions(v.decisions, when)})` : ''}.`;
    case 'revoked':
      return `Revoked by ${v.revoked?.by ?? 'an admin'} at ${when(v.revoked?.at ?? v.expiresAt)}: "${v.revoked?.reason ?? ''}".`;
    case 'pending':
      return v.decisions.length
        ? `Still pending: ${describeDecisions(v.decisions, when)}.`
        : 'Still pending, with no decisions yet.';
  }
}
