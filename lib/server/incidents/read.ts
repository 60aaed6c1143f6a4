import 'server-only';
import { replicaSafe } from '../db/replica';
import { z } from 'zod';
import { first } from '../db/kysely';
import { selectApprovalRequestRef } from './sql';
import { logIncidentAccess, type IncidentAccessFormat } from './access-log';
import { findOutcomeRequestRef, listIncidentOutcomes } from './records';
import { authorize } from '@/lib/auth/permissions';
import type { Actor } from '@/lib/auth/actor';
import { isUuid } from '@/lib/approvals/schemas';
import { effectiveStatus } from '@/lib/approvals/view';
import { detectFindings } from '@/lib/incidents/findings';
import { incidentMarkdown } from '@/lib/incidents/markdown';
import { summarizeIncident } from '@/lib/incidents/summary';
import { buildTimeline } from '@/lib/incidents/timeline';
import { incidentSentence, timelineReportRows } from '@/lib/incidents/timeline-report';
import { storable } from '@/lib/outcomes/schemas';
import { incidentRefSchema } from '@/lib/incidents/query';
import { fail, fieldErrors, ok, type Result } from '@/lib/result';
import type { IncidentView } from './types';
import { approvalScope, listIncidentApprovals } from './approvals';
import { findingPolicy } from './policy';

/** Everything under one request reference: records, approvals, what was and was not done, findings. */
export const getIncident = replicaSafe(async function getIncident(
  reader: Actor,
  requestRef: string,
): Promise<Result<IncidentView>> {
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
});

/**
 * What the incident page, the API and the exports call: records who opened the incident, how,
 * and reads it. Logged found or not: a look-up of a reference that does not exist is an access
 * too. If the log cannot be written the whole call fails, so nothing is shown unlogged.
 */
export async function openIncident(
  reader: Actor,
  requestRef: string,
  format: IncidentAccessFormat,
): Promise<Result<IncidentView>> {
  // Reading it (page, JSON) and exporting it (Markdown) are separate permissions.
  if (!authorize(reader, format === 'markdown' ? 'incidents.export' : 'incidents.read')) return fail('forbidden');
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
    identifiers: incident.records.flatMap((r) =>
      [r.idempotencyKey, r.id, r.eventId, r.grantId].filter((x): x is string => !!x),
    ),
  });
}

/**
 * Where a search term leads, or null: a request reference, idempotency key, event id or grant id
 * of the outcome records, then a request reference, approval id or grant id of the approvals
 * (an incident may so far hold approvals only).
 */
export const resolveIncidentRef = replicaSafe(async function resolveIncidentRef(
  reader: Actor,
  term: string,
): Promise<string | null> {
  const trimmed = term.trim();
  if (!trimmed || trimmed.length > 255 || !storable(z.string()).safeParse(trimmed).success) return null;
  return (await findOutcomeRequestRef(reader, trimmed)) ?? findApprovalRequestRef(reader, trimmed);
});

// One round trip, each branch an indexed lookup (an OR across the tables would scan).
async function findApprovalRequestRef(reader: Actor, term: string): Promise<string | null> {
  const scope = approvalScope(reader);
  if (!scope) return null;
  const org = scope.organization;
  const id = isUuid(term) ? term.toLowerCase() : null;
  const hit = await first(selectApprovalRequestRef(term, id, org));
  return hit?.request_ref ?? null;
}
