import 'server-only';
import { z } from 'zod';
import { db, pool } from './db';
import { logIncidentAccess, type IncidentAccessFormat } from './access-log';
import { findOutcomeRequestRef, listIncidentOutcomes, type OutcomeReader, type OutcomeView } from './outcomes';
import { Prisma } from '@/lib/generated/prisma/client';
import { requiredApprovalsFor } from '@/lib/approvals/policy';
import { isUuid, type ApprovalStatus, type DecisionKind } from '@/lib/approvals/schemas';
import { effectiveStatus } from '@/lib/approvals/view';
import { can } from '@/lib/auth/permissions';
import { detectFindings } from '@/lib/incidents/findings';
import { incidentMarkdown } from '@/lib/incidents/markdown';
import { summarizeIncident } from '@/lib/incidents/summary';
import { buildTimeline, type IncidentApproval, type IncidentTimelineEntry } from '@/lib/incidents/timeline';
import { incidentSentence, timelineReportRows } from '@/lib/incidents/timeline-report';
import {
  groupBy,
  type Finding,
  type FindingKind,
  type IncidentPolicy,
  type IncidentSummary,
} from '@/lib/incidents/types';
import { storable, type ToolAnnotations } from '@/lib/outcomes/schemas';
import { incidentRefSchema } from '@/lib/incidents/query';
import { fail, fieldErrors, ok, type Result } from '@/lib/result';

export type { IncidentTimelineEntry } from '@/lib/incidents/timeline';

/** An approval request of the incident, as its summary card and the API list it. */
export type IncidentApprovalSummary = {
  id: string;
  /** Effective: a pending request past its expiry (database clock) reads expired. */
  status: ApprovalStatus;
  server: string;
  tool: string;
  principal: string;
  summary: string;
  requiredApprovals: number;
  approvals: number;
  createdAt: Date;
};

export type IncidentView = {
  requestRef: string;
  /** The one sentence of what was and was not done, and where its approvals stand. */
  sentence: string;
  summary: IncidentSummary;
  findings: Finding[];
  /** Outcome records and approval steps, oldest first. */
  timeline: IncidentTimelineEntry[];
  approvals: IncidentApprovalSummary[];
  records: (OutcomeView & { seq: number })[];
};

// ── Approvals of an incident ────────────────────────────────────────────────────────────────
// Read here rather than in approvals.ts because the incident decides what its reader may see:
// a key reading incidents (outcomes:read) sees its own organization's approvals, as it does records.

/** Whether the reader may see approvals in an incident, and of which organization (null: all). */
function approvalScope(reader: OutcomeReader): { organization: string | null } | null {
  if (!('kind' in reader)) return can(reader, 'approvals.read') ? { organization: null } : null;
  if (reader.kind === 'user') return can(reader.viewer, 'approvals.read') ? { organization: null } : null;
  return reader.scopes.includes('outcomes:read') ? { organization: reader.organization } : null;
}

type ApprovalRow = {
  id: string;
  request_ref: string;
  created_at: Date;
  status: ApprovalStatus;
  expires_at: Date;
  organization: string;
  principal: string;
  agent: string | null;
  server: string;
  tool_name: string;
  summary: string;
  required_approvals: number;
  resource_type: string | null;
  resource_id: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoke_reason: string | null;
  requested_by_key_id: string;
  requester_name: string | null;
  grant_id: string | null;
  grant_issued_at: Date | null;
  grant_expires_at: Date | null;
  grant_redeemed_at: Date | null;
  grant_revoked_at: Date | null;
  redeemed_by_key_id: string | null;
  redeemer_name: string | null;
  decisions: { reviewer: string; decision: DecisionKind; reason: string; at: string }[];
  now: Date;
};

const MAX_APPROVALS = 1_000;
const keyName = (name: string | null, id: string) => (name ? `API key "${name}"` : `api_key:${id}`);

function toIncidentApproval(r: ApprovalRow): IncidentApproval & { requestRef: string } {
  return {
    id: r.id,
    requestRef: r.request_ref,
    createdAt: r.created_at,
    status: r.status,
    expiresAt: r.expires_at,
    requestedBy: keyName(r.requester_name, r.requested_by_key_id),
    organization: r.organization,
    principal: r.principal,
    agent: r.agent,
    server: r.server,
    tool: r.tool_name,
    summary: r.summary,
    requiredApprovals: r.required_approvals,
    resource: r.resource_type != null && r.resource_id != null ? { type: r.resource_type, id: r.resource_id } : null,
    decisions: r.decisions.map((d) => ({ ...d, at: new Date(d.at) })),
    revoked: r.revoked_at ? { at: r.revoked_at, by: r.revoked_by ?? 'unknown', reason: r.revoke_reason ?? '' } : null,
    grant:
      r.grant_id && r.grant_issued_at && r.grant_expires_at
        ? {
            id: r.grant_id,
            issuedAt: r.grant_issued_at,
            expiresAt: r.grant_expires_at,
            redeemedAt: r.grant_redeemed_at,
            redeemedBy: r.redeemed_by_key_id ? keyName(r.redeemer_name, r.redeemed_by_key_id) : null,
            revokedAt: r.grant_revoked_at,
          }
        : null,
  };
}

const INCIDENT_APPROVALS = `
  SELECT r.id, r.request_ref, r.created_at, r.status::text AS status, r.expires_at, r.organization, r.principal, r.agent,
         r.server, r.tool_name, r.summary, r.required_approvals, r.resource_type, r.resource_id,
         r.revoked_at, r.revoked_by, r.revoke_reason, r.requested_by_key_id, rk.name AS requester_name,
         g.id AS grant_id, g.issued_at AS grant_issued_at, g.expires_at AS grant_expires_at,
         g.redeemed_at AS grant_redeemed_at, g.revoked_at AS grant_revoked_at, g.redeemed_by_key_id, gk.name AS redeemer_name,
         COALESCE((SELECT json_agg(json_build_object('reviewer', d.reviewer_email, 'decision', d.decision, 'reason', d.reason, 'at', d.at) ORDER BY d.at, d.id)
                   FROM approval_decisions d WHERE d.approval_id = r.id), '[]'::json) AS decisions,
         clock_timestamp() AS now
  FROM approval_requests r
  LEFT JOIN grants g ON g.approval_id = r.id
  LEFT JOIN api_keys rk ON rk.id = r.requested_by_key_id
  LEFT JOIN api_keys gk ON gk.id = g.redeemed_by_key_id
  WHERE r.request_ref = ANY($1::text[]) AND ($2::text IS NULL OR r.organization = $2::text)
  ORDER BY r.created_at, r.id
  LIMIT $3::int`;

/**
 * Every approval request filed under some request references, with its decisions, grant and the
 * API keys that asked and redeemed: one query. `now` is the database clock (expiry is judged by it).
 */
async function listIncidentApprovals(
  reader: OutcomeReader,
  refs: string[],
): Promise<{ approvals: (IncidentApproval & { requestRef: string })[]; now: Date }> {
  const scope = approvalScope(reader);
  if (!scope || !refs.length) return { approvals: [], now: new Date() };
  const org = scope.organization;
  const { rows } = await pool().query<ApprovalRow>(INCIDENT_APPROVALS, [refs, org, MAX_APPROVALS]);
  return { approvals: rows.map(toIncidentApproval), now: rows[0]?.now ?? new Date() };
}

/** Grants redeemed under some request references (for the grant check of findings across a list). */
async function listRedeemedGrants(reader: OutcomeReader, refs: string[]): Promise<RedeemedGrant[]> {
  const scope = approvalScope(reader);
  if (!scope || !refs.length) return [];
  const org = scope.organization;
  const rows = await db.$queryRaw<{ id: string; request_ref: string; server: string; tool_name: string }[]>`
    SELECT g.id, r.request_ref, g.server, g.tool_name
    FROM grants g JOIN approval_requests r ON r.id = g.approval_id
    WHERE r.request_ref IN (${Prisma.join(refs)}) AND g.redeemed_at IS NOT NULL
      AND (${org}::text IS NULL OR r.organization = ${org}::text)`;
  return rows.map((r) => ({ id: r.id, requestRef: r.request_ref, server: r.server, tool: r.tool_name }));
}

// ── Findings policy from the server side ────────────────────────────────────────────────────

type RedeemedGrant = { id: string; requestRef: string; server: string; tool: string };
type PolicyRecord = Pick<
  OutcomeView,
  'id' | 'requestRef' | 'server' | 'grantId' | 'annotationsTrusted' | 'classification'
> & { tool: { name: string; annotations: ToolAnnotations | null } };

const needsGrantCheck = (r: PolicyRecord) => r.classification.delivery === 'completed' && !r.classification.readOnly;

/**
 * What "policy requires approval" and "has a redeemed grant" mean for write_without_grant: the
 * admin rules and trusted annotations the approval policy uses, and only grants actually redeemed
 * for that tool and server under the same request reference. One query for the rules, and none
 * when no completed write needs judging.
 */
async function findingPolicy(
  records: readonly PolicyRecord[],
  redeemed: readonly RedeemedGrant[],
): Promise<Partial<IncidentPolicy>> {
  const writes = records.filter(needsGrantCheck);
  if (!writes.length) return {};
  const { rows: rules } = await pool().query<{ server: string; toolName: string; requiredApprovals: number }>(
    'SELECT server, tool_name AS "toolName", required_approvals AS "requiredApprovals" FROM policy_rules WHERE server = ANY($1::text[])',
    [[...new Set(writes.map((r) => r.server))]],
  );
  const needsApproval = new Map(
    writes.map((r) => [
      r.id,
      requiredApprovalsFor({
        toolName: r.tool.name,
        annotations: r.tool.annotations,
        serverTrusted: r.annotationsTrusted,
        rules: rules.filter((rule) => rule.server === r.server),
      }).requiredApprovals > 0,
    ]),
  );
  const grantKey = (ref: string, id: string, server: string, tool: string) => JSON.stringify([ref, id, server, tool]);
  const covering = new Set(redeemed.map((g) => grantKey(g.requestRef, g.id, g.server, g.tool)));
  return {
    requiresApproval: (r) => needsApproval.get(r.id) ?? !r.classification.readOnly,
    hasGrant: (r) => !!r.grantId && covering.has(grantKey(r.requestRef, r.grantId, r.server, r.tool.name)),
  };
}

// ── One incident ────────────────────────────────────────────────────────────────────────────

/** Everything under one request reference: records, approvals, what was and was not done, findings. */
export async function getIncident(reader: OutcomeReader, requestRef: string): Promise<Result<IncidentView>> {
  // A reference no record can have (NUL, half a surrogate pair, too long) is named as the fault
  // rather than sent to the database, which refuses NUL with an error.
  const ref = incidentRefSchema.safeParse(requestRef);
  if (!ref.success)
    return fail(
      'invalid_input',
      'This is not a request reference.',
      fieldErrors(ref.error.issues.map((i) => ({ ...i, path: ['requestRef'] }))),
    );
  // Independent reads: side by side, not one after the other.
  const [records, { approvals, now }] = await Promise.all([
    listIncidentOutcomes(reader, requestRef),
    listIncidentApprovals(reader, [requestRef]),
  ]);
  if (!records.ok) return records;
  if (records.value.length === 0 && approvals.length === 0) {
    return fail('not_found', `Nothing is recorded under the request reference "${requestRef}".`);
  }
  const redeemed = approvals.flatMap((a) =>
    a.grant?.redeemedAt ? [{ id: a.grant.id, requestRef, server: a.server, tool: a.tool }] : [],
  );
  const summary = summarizeIncident(records.value);
  return ok({
    requestRef,
    sentence: incidentSentence(summary, approvals, now),
    summary,
    findings: detectFindings(records.value, await findingPolicy(records.value, redeemed)),
    timeline: buildTimeline(records.value, approvals, now),
    approvals: approvals.map((a) => ({
      id: a.id,
      status: effectiveStatus(a.status, a.expiresAt, now),
      server: a.server,
      tool: a.tool,
      principal: a.principal,
      summary: a.summary,
      requiredApprovals: a.requiredApprovals,
      approvals: a.decisions.filter((d) => d.decision === 'approve').length,
      createdAt: a.createdAt,
    })),
    records: records.value,
  });
}

/**
 * What the incident page, the API and the exports call: records who opened the incident, how,
 * and reads it. Logged found or not: a look-up of a reference that does not exist is an access
 * too. If the log cannot be written the whole call fails, so nothing is shown unlogged.
 */
export async function openIncident(
  reader: OutcomeReader,
  requestRef: string,
  format: IncidentAccessFormat,
): Promise<Result<IncidentView>> {
  // The log entry and the read run together; the answer waits for both, so no incident is
  // shown without its access recorded.
  const [, incident] = await Promise.all([
    logIncidentAccess(reader, requestRef, format),
    getIncident(reader, requestRef),
  ]);
  return incident;
}

/** The API body: the same incident without the full records (the timeline carries what matters). */
export function incidentApiBody(incident: IncidentView) {
  const { records: _records, ...rest } = incident;
  return { ...rest, timeline: rest.timeline.map((e) => ({ ...e, at: e.at.toISOString() })) };
}

export function incidentReport(incident: IncidentView): string {
  return incidentMarkdown({
    requestRef: incident.requestRef,
    sentence: incident.sentence,
    summary: incident.summary,
    findings: incident.findings,
    timeline: timelineReportRows(incident.timeline),
  });
}

// ── Search ──────────────────────────────────────────────────────────────────────────────────

/**
 * Where a search term leads, or null: a request reference, idempotency key, event id or grant id
 * of the outcome records, then a request reference, approval id or grant id of the approvals
 * (an incident may so far hold approvals only).
 */
export async function resolveIncidentRef(reader: OutcomeReader, term: string): Promise<string | null> {
  const trimmed = term.trim();
  if (!trimmed || trimmed.length > 255 || !storable(z.string()).safeParse(trimmed).success) return null;
  return (await findOutcomeRequestRef(reader, trimmed)) ?? findApprovalRequestRef(reader, trimmed);
}

// One round trip, each branch an indexed lookup (an OR across the tables would scan).
async function findApprovalRequestRef(reader: OutcomeReader, term: string): Promise<string | null> {
  const scope = approvalScope(reader);
  if (!scope) return null;
  const org = scope.organization;
  const id = isUuid(term) ? term.toLowerCase() : null;
  const [hit] = await db.$queryRaw<{ request_ref: string }[]>`
    SELECT request_ref FROM (
      (SELECT 1 AS priority, r.request_ref FROM approval_requests r
        WHERE r.request_ref = ${term} AND (${org}::text IS NULL OR r.organization = ${org}::text) LIMIT 1)
      UNION ALL
      (SELECT 2, r.request_ref FROM approval_requests r
        WHERE r.id = ${id}::uuid AND (${org}::text IS NULL OR r.organization = ${org}::text))
      UNION ALL
      (SELECT 3, r.request_ref FROM grants g JOIN approval_requests r ON r.id = g.approval_id
        WHERE g.id = ${id}::uuid AND (${org}::text IS NULL OR r.organization = ${org}::text))
    ) hits ORDER BY priority LIMIT 1`;
  return hit?.request_ref ?? null;
}

// ── Findings across many incidents ──────────────────────────────────────────────────────────

/**
 * Findings of the incidents behind some records (e.g. one page of the outcome list), by record id:
 * one query for all their references, analysed per reference. Capped so one huge incident cannot
 * stall a list page; the incident page itself shows the full analysis.
 */
export async function findingsByRecord(
  reader: OutcomeReader,
  requestRefs: string[],
  maxRecords = 20_000,
): Promise<Map<string, FindingKind[]>> {
  const byRecord = new Map<string, FindingKind[]>();
  const refs = [...new Set(requestRefs)];
  if (!refs.length) return byRecord;
  const records = await listIncidentOutcomes(reader, refs, maxRecords);
  if (!records.ok) return byRecord;
  const policy = await listPolicy(reader, records.value);
  for (const group of groupBy(records.value, (r) => r.requestRef)) {
    for (const f of detectFindings(group, policy)) {
      for (const id of f.recordIds) {
        const kinds = byRecord.get(id) ?? [];
        if (!kinds.includes(f.kind)) byRecord.set(id, [...kinds, f.kind]);
      }
    }
  }
  return byRecord;
}

/** Findings among the given request references (the overview passes the most recently active ones). */
export async function countRecentFindings(
  reader: OutcomeReader,
  refs: string[],
): Promise<{ findings: number; incidents: number }> {
  const records = await listIncidentOutcomes(reader, refs, 20_000);
  if (!records.ok) return { findings: 0, incidents: 0 };
  const policy = await listPolicy(reader, records.value);
  let findings = 0;
  let incidents = 0;
  for (const group of groupBy(records.value, (r) => r.requestRef)) {
    const n = detectFindings(group, policy).length;
    findings += n;
    if (n) incidents += 1;
  }
  return { findings, incidents };
}

/** The findings policy for records of many incidents: grants are read only when a write carries one. */
async function listPolicy(reader: OutcomeReader, records: readonly OutcomeView[]): Promise<Partial<IncidentPolicy>> {
  const refs = [...new Set(records.filter((r) => r.grantId && needsGrantCheck(r)).map((r) => r.requestRef))];
  return findingPolicy(records, refs.length ? await listRedeemedGrants(reader, refs) : []);
}
