// What incident analysis reads and returns. Pure: no I/O, importable anywhere.
//
// An `IncidentRecord` is a structural subset of a stored outcome record as read back
// (`OutcomeView` in lib/server/outcomes/) plus `seq`, the order the console received it in,
// which the caller supplies (e.g. the received sequence, or the index by receivedAt).
import type { Classification, ObservedTask, ToolAnnotations } from '@/lib/outcomes/schemas';
import type { Resolution } from '@/lib/outcomes/resolution';

export type IncidentRecord = {
  id: string;
  occurredAt: Date;
  /** Receipt order: breaks ties in `occurredAt` (docs/design.md: "Later"). */
  seq: number;
  requestRef: string;
  idempotencyKey?: string | null;
  attempt?: number | null;
  organization: string;
  principal: string;
  agent?: string | null;
  server: string;
  tool: { name: string; annotations?: ToolAnnotations | null };
  argsDigest?: string | null;
  grantId?: string | null;
  summary?: string | null;
  /** A guard's refusal: the earlier record it points to (docs/design.md "Guards at the point of execution"). */
  earlierRecordId?: string | null;
  classification: Classification;
  /** What the caller saw; only the MCP task (its id and the status seen) is read here. */
  observed?: { task?: ObservedTask | null };
  /** What settled this record if it was an unknown (docs/design.md "Resolving an unknown"). */
  resolution?: Resolution | null;
};

export type IncidentPolicy = {
  /** Attempts one operation may take in a row before it is unbounded retry. */
  maxAttempts: number;
  /**
   * Backoff: each gap between attempts must be longer than the gap before it and at least this
   * many times it. 1 means "must grow"; equal gaps are a fixed interval, not backoff.
   */
  minBackoffGrowth: number;
  /** Whether a completed call needed a redeemed grant (only asked about calls not read-only). */
  requiresApproval: (record: IncidentRecord) => boolean;
  /**
   * Whether a call ran under a grant that covers it. Without the approval tables at hand a
   * `grantId` is taken at its word; the data layer passes a check against the grants actually
   * redeemed for that tool and server in the incident.
   */
  hasGrant: (record: IncidentRecord) => boolean;
};

/** docs/design.md: by default every tool not trusted as read-only needs approval. */
export const DEFAULT_INCIDENT_POLICY: IncidentPolicy = {
  maxAttempts: 3,
  minBackoffGrowth: 1,
  requiresApproval: (record) => !record.classification.readOnly,
  hasGrant: (record) => !!record.grantId,
};

export const findingKinds = [
  'permission_expansion',
  'unsafe_replay',
  'retried_non_retryable',
  'unbounded_retry',
  'write_without_grant',
] as const;
export type FindingKind = (typeof findingKinds)[number];

export type Severity = 'high' | 'medium' | 'low';

export type Finding = {
  kind: FindingKind;
  severity: Severity;
  /** The trigger and the offending records, in time order. */
  recordIds: string[];
  /** One plain sentence naming the tools and keys involved. */
  explanation: string;
};

export type IncidentSummary = {
  /** One sentence per operation that completed. */
  done: string[];
  /** One sentence per operation that was refused or never sent: nothing was done. */
  notDone: string[];
  /** One sentence per write whose effect is not known: check before repeating. */
  unknown: string[];
  /** Tool names of the unknown operations, for `oneSentence` (not parsed from the sentences). */
  unknownTools: string[];
};

/** What a timeline entry is: an outcome record, or a step in an approval's life. */
export const timelineKinds = [
  'outcome',
  'approval_requested',
  'decision',
  'grant_issued',
  'grant_redeemed',
  'revoked',
  'expired',
] as const;
export type TimelineKind = (typeof timelineKinds)[number];

export const timelineKindLabel: Record<TimelineKind, string> = {
  outcome: 'Outcome',
  approval_requested: 'Approval requested',
  decision: 'Decision',
  grant_issued: 'Grant issued',
  grant_redeemed: 'Grant redeemed',
  revoked: 'Revoked',
  expired: 'Expired',
};

/**
 * One row of the report's timeline. `status` qualifies the kind ("completed · ok", "deny"); it
 * and everything else but `kind` is untrusted text.
 */
export type TimelineEntry = {
  at: Date;
  kind: TimelineKind;
  status?: string | null;
  title: string;
  detail?: string | null;
};

/** "Later" (docs/design.md): by occurredAt, ties broken by receipt order, then id for a total order. */
export function compareRecords(a: IncidentRecord, b: IncidentRecord): number {
  return a.occurredAt.getTime() - b.occurredAt.getTime() || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function inTimeOrder<T extends IncidentRecord>(records: readonly T[]): T[] {
  return [...records].sort(compareRecords);
}

/** Groups in first-seen order, each keeping the input order. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return [...groups.values()];
}

/** "refund_payment on billing-mcp": how findings and summaries name a call. */
export const callName = (r: Pick<IncidentRecord, 'server' | 'tool'>) => `${r.tool.name} on ${r.server}`;

/**
 * The calls unbounded_retry counts as retries of one another: its idempotency key when it has one,
 * else its arguments digest; with neither, a call stands alone. Wider than an operation
 * (lib/incidents/operations.ts): an agent repeating a call without a key, or with other arguments
 * under one key, is still retrying it, though nothing makes the attempts one operation.
 */
export function retryKey(r: IncidentRecord): string {
  const scope = JSON.stringify([r.requestRef, r.organization, r.server, r.tool.name]);
  if (r.idempotencyKey) return `${scope}key:${r.idempotencyKey}`;
  if (r.argsDigest) return `${scope}args:${r.argsDigest}`;
  return `${scope}record:${r.id}`;
}
