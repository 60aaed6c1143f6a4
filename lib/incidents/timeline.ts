// The incident timeline (docs/api.md, "Incidents"): outcome records merged with every step of the
// approvals filed under the same request reference, oldest first. Pure: the data layer reads the
// rows (and the database clock) and maps them into `IncidentApproval`.
//
// Rules where docs/design.md is silent:
// - An approval contributes: its request, each decision, its grant's issue, then whichever ended
//   it: the grant's redemption, a revocation, or expiry (of the pending request, or of a grant
//   left unused). Expiry is judged by the `now` the caller read from the database clock, so a
//   request still pending shows no expiry yet.
// - The grant is issued by whoever made it so: the reviewer whose approval completed the count,
//   or policy itself when the request needed none.
// - Equal times keep an approval's own order (requested, decisions, issue, redemption) and put
//   outcome records after approval steps but before revocation and expiry: a call made with a
//   freshly redeemed grant reads after the redemption.
import { effectiveStatus } from '@/lib/approvals/view';
import type { ApprovalStatus, DecisionKind } from '@/lib/approvals/schemas';
import type { Classification, ObservedTask } from '@/lib/outcomes/schemas';
import { callName, type IncidentRecord, type TimelineKind } from './types';

/** An approval request of the incident with everything that happened to it, as stored. */
export type IncidentApproval = {
  id: string;
  createdAt: Date;
  /** As stored: a pending request past `expiresAt` reads expired here. */
  status: ApprovalStatus;
  expiresAt: Date;
  /** The API key that asked: its name, or `api_key:<id>` when it is gone. */
  requestedBy: string;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  tool: string;
  summary: string;
  requiredApprovals: number;
  resource: { type: string; id: string } | null;
  decisions: { reviewer: string; decision: DecisionKind; reason: string; at: Date }[];
  revoked: { at: Date; by: string; reason: string } | null;
  grant: {
    id: string;
    issuedAt: Date;
    expiresAt: Date;
    redeemedAt: Date | null;
    /** The API key that redeemed it (name, or `api_key:<id>`). */
    redeemedBy: string | null;
    revokedAt: Date | null;
  } | null;
};

type Entry<K extends TimelineKind, T> = {
  at: Date;
  kind: K;
  title: string;
  detail: string | null;
  approvalId: string | null;
} & T;

export type OutcomeEntry = Entry<
  'outcome',
  {
    recordId: string;
    idempotencyKey: string | null;
    attempt: number | null;
    grantId: string | null;
    /** A guard's refusal: the earlier record it points to. */
    earlierRecordId: string | null;
    classification: Classification;
    /** The MCP task this record saw, if the call ran as one: its id and the status then. */
    task: ObservedTask | null;
  }
>;
export type ApprovalRequestedEntry = Entry<
  'approval_requested',
  { approvalId: string } & Pick<
    IncidentApproval,
    | 'requestedBy'
    | 'organization'
    | 'principal'
    | 'agent'
    | 'server'
    | 'tool'
    | 'summary'
    | 'requiredApprovals'
    | 'resource'
  >
>;
export type DecisionEntry = Entry<
  'decision',
  { approvalId: string; reviewer: string; decision: DecisionKind; reason: string }
>;
export type GrantIssuedEntry = Entry<
  'grant_issued',
  { approvalId: string; grantId: string; issuedBy: string; expiresAt: Date }
>;
export type GrantRedeemedEntry = Entry<
  'grant_redeemed',
  { approvalId: string; grantId: string; redeemedBy: string; server: string; tool: string }
>;
export type RevokedEntry = Entry<
  'revoked',
  { approvalId: string; revokedBy: string; reason: string; grantId: string | null }
>;
export type ExpiredEntry = Entry<'expired', { approvalId: string; what: 'request' | 'grant'; grantId: string | null }>;

export type IncidentTimelineEntry =
  | OutcomeEntry
  | ApprovalRequestedEntry
  | DecisionEntry
  | GrantIssuedEntry
  | GrantRedeemedEntry
  | RevokedEntry
  | ExpiredEntry;

const RANK: Record<TimelineKind, number> = {
  approval_requested: 0,
  decision: 1,
  grant_issued: 2,
  grant_redeemed: 3,
  outcome: 4,
  revoked: 5,
  expired: 6,
};

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const iso = (d: Date) => d.toISOString();

/** An outcome record as a timeline entry; `approvalId` when its grant belongs to one of the incident's approvals. */
export function outcomeEntry(r: IncidentRecord, approvalId: string | null = null): OutcomeEntry {
  return {
    at: r.occurredAt,
    kind: 'outcome',
    title: callName(r),
    detail: r.summary ?? null,
    approvalId,
    recordId: r.id,
    idempotencyKey: r.idempotencyKey ?? null,
    attempt: r.attempt ?? null,
    grantId: r.grantId ?? null,
    earlierRecordId: r.earlierRecordId ?? null,
    classification: r.classification,
    task: r.observed?.task ?? null,
  };
}

/** Every step of one approval so far, in its own order. `now` is the database clock. */
export function approvalEntries(a: IncidentApproval, now: Date): IncidentTimelineEntry[] {
  const call = `${a.tool} on ${a.server}`;
  const base = { approvalId: a.id };
  const out: IncidentTimelineEntry[] = [
    {
      ...base,
      at: a.createdAt,
      kind: 'approval_requested',
      title: `Approval requested: ${call}`,
      detail:
        `${a.requestedBy} asks on behalf of ${a.principal}${a.agent ? ` (agent ${a.agent})` : ''}: ${a.summary}. ` +
        (a.requiredApprovals ? `Needs ${plural(a.requiredApprovals, 'approval')}.` : 'Needs no approval under policy.'),
      requestedBy: a.requestedBy,
      organization: a.organization,
      principal: a.principal,
      agent: a.agent,
      server: a.server,
      tool: a.tool,
      summary: a.summary,
      requiredApprovals: a.requiredApprovals,
      resource: a.resource,
    },
  ];

  const decisions = [...a.decisions].sort((x, y) => x.at.getTime() - y.at.getTime());
  for (const d of decisions) {
    out.push({
      ...base,
      at: d.at,
      kind: 'decision',
      title: `${d.decision === 'approve' ? 'Approved' : 'Denied'} by ${d.reviewer}`,
      detail: d.reason,
      reviewer: d.reviewer,
      decision: d.decision,
      reason: d.reason,
    });
  }

  const g = a.grant;
  if (g) {
    const completing = decisions.filter((d) => d.decision === 'approve').at(-1);
    const issuedBy = a.requiredApprovals === 0 || !completing ? 'policy (no approval required)' : completing.reviewer;
    out.push({
      ...base,
      at: g.issuedAt,
      kind: 'grant_issued',
      title: `Grant issued for ${call}`,
      detail: `Grant ${g.id}, issued by ${issuedBy}, usable once until ${iso(g.expiresAt)}.`,
      grantId: g.id,
      issuedBy,
      expiresAt: g.expiresAt,
    });
    if (g.redeemedAt) {
      const redeemedBy = g.redeemedBy ?? 'unknown';
      out.push({
        ...base,
        at: g.redeemedAt,
        kind: 'grant_redeemed',
        title: `Grant redeemed for ${call}`,
        detail: `Grant ${g.id} redeemed by ${redeemedBy}.`,
        grantId: g.id,
        redeemedBy,
        server: a.server,
        tool: a.tool,
      });
    }
  }

  if (a.revoked) {
    const grantId = g?.revokedAt ? g.id : null;
    out.push({
      ...base,
      at: a.revoked.at,
      kind: 'revoked',
      title: `${grantId ? 'Grant' : 'Approval request'} revoked by ${a.revoked.by}`,
      detail: a.revoked.reason || null,
      revokedBy: a.revoked.by,
      reason: a.revoked.reason,
      grantId,
    });
  }

  if (effectiveStatus(a.status, a.expiresAt, now) === 'expired') {
    const approvals = decisions.filter((d) => d.decision === 'approve').length;
    out.push({
      ...base,
      at: a.expiresAt,
      kind: 'expired',
      title: `Approval request expired: ${call}`,
      detail: `Expired with ${approvals} of ${plural(a.requiredApprovals, 'approval')}.`,
      what: 'request',
      grantId: null,
    });
  } else if (g && !g.redeemedAt && !g.revokedAt && g.expiresAt <= now) {
    out.push({
      ...base,
      at: g.expiresAt,
      kind: 'expired',
      title: `Grant expired unused: ${call}`,
      detail: `Grant ${g.id} was never redeemed.`,
      what: 'grant',
      grantId: g.id,
    });
  }
  return out;
}

/**
 * The merged timeline, oldest first. `records` must already be in "later" order (occurredAt,
 * then receipt): records with equal times keep it.
 *
 * Times come from different clocks (the caller's for records, the app's and the database's for
 * approval steps), so a few milliseconds can put an effect before its cause. The order is
 * therefore by a sort time that never runs backwards within one approval (a grant is issued after
 * the decision that issued it) and puts a call made with a redeemed grant after the redemption.
 * Each entry still shows its own recorded time.
 */
export function buildTimeline(
  records: readonly IncidentRecord[],
  approvals: readonly IncidentApproval[],
  now: Date,
): IncidentTimelineEntry[] {
  const approvalOfGrant = new Map(approvals.flatMap((a) => (a.grant ? [[a.grant.id, a.id] as const] : [])));
  const keyed: { entry: IncidentTimelineEntry; key: number }[] = [];
  const redeemedKey = new Map<string, number>();
  for (const a of approvals) {
    let key = Number.NEGATIVE_INFINITY;
    for (const entry of approvalEntries(a, now)) {
      key = Math.max(key, entry.at.getTime());
      keyed.push({ entry, key });
      if (entry.kind === 'grant_redeemed') redeemedKey.set(entry.grantId, key);
    }
  }
  for (const r of records) {
    const entry = outcomeEntry(r, (r.grantId && approvalOfGrant.get(r.grantId)) || null);
    const after = entry.approvalId && entry.grantId ? redeemedKey.get(entry.grantId) : undefined;
    keyed.push({ entry, key: Math.max(entry.at.getTime(), after ?? Number.NEGATIVE_INFINITY) });
  }
  // Equal keys and kinds keep the input order: receipt order for records, lifecycle order for steps.
  return keyed
    .map((k, index) => ({ ...k, index }))
    .sort((x, y) => x.key - y.key || RANK[x.entry.kind] - RANK[y.entry.kind] || x.index - y.index)
    .map(({ entry }) => entry);
}
