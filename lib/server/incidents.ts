import 'server-only';
import { detectFindings } from '@/lib/incidents/findings';
import { incidentMarkdown } from '@/lib/incidents/markdown';
import { oneSentence, summarizeIncident } from '@/lib/incidents/summary';
import { groupBy, type Finding, type FindingKind, type IncidentSummary } from '@/lib/incidents/types';
import type { Classification } from '@/lib/outcomes/schemas';
import { fail, ok, type Result } from '@/lib/result';
import { findOutcomeRequestRef, listIncidentOutcomes, type OutcomeReader, type OutcomeView } from './outcomes';

export type IncidentTimelineEntry = {
  at: Date;
  kind: 'outcome';
  title: string;
  detail: string | null;
  recordId: string;
  idempotencyKey: string | null;
  attempt: number | null;
  classification: Classification;
};

export type IncidentView = {
  requestRef: string;
  /** The one sentence of what was and was not done. */
  sentence: string;
  summary: IncidentSummary;
  findings: Finding[];
  timeline: IncidentTimelineEntry[];
  records: (OutcomeView & { seq: number })[];
};

/** Everything under one request reference: records, what was and was not done, findings. */
export async function getIncident(reader: OutcomeReader, requestRef: string): Promise<Result<IncidentView>> {
  const records = await listIncidentOutcomes(reader, requestRef);
  if (!records.ok) return records;
  if (records.value.length === 0) return fail('not_found', `Nothing is recorded under the request reference "${requestRef}".`);
  const summary = summarizeIncident(records.value);
  const timeline: IncidentTimelineEntry[] = records.value.map((r) => ({
    at: r.occurredAt,
    kind: 'outcome',
    title: `${r.tool.name} on ${r.server}`,
    detail: r.summary,
    recordId: r.id,
    idempotencyKey: r.idempotencyKey,
    attempt: r.attempt,
    classification: r.classification,
  }));
  return ok({
    requestRef,
    sentence: oneSentence(summary),
    summary,
    findings: detectFindings(records.value),
    timeline,
    records: records.value,
  });
}

/** The API body: the same incident without the full records (the timeline carries what matters). */
export function incidentApiBody(incident: IncidentView) {
  const { records: _records, ...rest } = incident;
  return { ...rest, timeline: rest.timeline.map((e) => ({ ...e, at: e.at.toISOString() })) };
}

export function incidentReport(incident: IncidentView): string {
  return incidentMarkdown({
    requestRef: incident.requestRef,
    summary: incident.summary,
    findings: incident.findings,
    timeline: incident.timeline.map((e) => ({
      at: e.at,
      kind: `${e.classification.delivery.replace('_', ' ')} · ${e.classification.category}`,
      title: e.title,
      detail: [e.detail, e.idempotencyKey ? `key ${e.idempotencyKey}` : null, e.classification.nextStep].filter(Boolean).join(' — '),
    })),
  });
}

/** Where a search term (reference, idempotency key, event id, grant id) leads, or null. */
export async function resolveIncidentRef(reader: OutcomeReader, term: string): Promise<string | null> {
  const trimmed = term.trim();
  if (!trimmed || trimmed.length > 255) return null;
  return findOutcomeRequestRef(reader, trimmed);
}

/**
 * Findings of the incidents behind some records (e.g. one page of the outcome list), by record id:
 * one query for all their references, analysed per reference. Capped so one huge incident cannot
 * stall a list page; the incident page itself shows the full analysis.
 */
export async function findingsByRecord(reader: OutcomeReader, requestRefs: string[], maxRecords = 20_000): Promise<Map<string, FindingKind[]>> {
  const byRecord = new Map<string, FindingKind[]>();
  const refs = [...new Set(requestRefs)];
  if (!refs.length) return byRecord;
  const records = await listIncidentOutcomes(reader, refs, maxRecords);
  if (!records.ok) return byRecord;
  for (const group of groupBy(records.value, (r) => r.requestRef)) {
    for (const f of detectFindings(group)) {
      for (const id of f.recordIds) {
        const kinds = byRecord.get(id) ?? [];
        if (!kinds.includes(f.kind)) byRecord.set(id, [...kinds, f.kind]);
      }
    }
  }
  return byRecord;
}

/** Findings among the given request references (the overview passes the most recently active ones). */
export async function countRecentFindings(reader: OutcomeReader, refs: string[]): Promise<{ findings: number; incidents: number }> {
  const records = await listIncidentOutcomes(reader, refs, 20_000);
  if (!records.ok) return { findings: 0, incidents: 0 };
  let findings = 0;
  let incidents = 0;
  for (const group of groupBy(records.value, (r) => r.requestRef)) {
    const n = detectFindings(group).length;
    findings += n;
    if (n) incidents += 1;
  }
  return { findings, incidents };
}
