import 'server-only';
import { replicaSafe } from '../db/replica';
import { rows as run } from '../db/kysely';
import { selectPolicyRules } from './sql';
import type { OutcomeView } from '../outcomes';
import { listFindingInputs, type FindingInput } from './records';
import type { Actor } from '@/lib/auth/actor';
import { requiredApprovalsFor } from '@/lib/approvals/policy';
import { detectFindings } from '@/lib/incidents/findings';
import { groupBy, type FindingKind, type IncidentPolicy } from '@/lib/incidents/types';
import { type ToolAnnotations } from '@/lib/outcomes/schemas';
import { listRedeemedGrants } from './approvals';
import type { RedeemedGrant } from './types';

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
export async function findingPolicy(
  records: readonly PolicyRecord[],
  redeemed: readonly RedeemedGrant[],
): Promise<Partial<IncidentPolicy>> {
  const writes = records.filter(needsGrantCheck);
  if (!writes.length) return {};
  const rules = await run(selectPolicyRules([...new Set(writes.map((r) => r.server))]));
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

/**
 * Findings of the incidents behind some records (e.g. one page of the outcome list), by record id:
 * one query for all their references, analysed per reference. Capped so one huge incident cannot
 * stall a list page; the incident page itself shows the full analysis.
 */
export const findingsByRecord = replicaSafe(async function findingsByRecord(
  reader: Actor,
  requestRefs: string[],
  maxRecords: number = 20_000,
): Promise<Map<string, FindingKind[]>> {
  const byRecord = new Map<string, FindingKind[]>();
  const refs = [...new Set(requestRefs)];
  if (!refs.length) return byRecord;
  const records = await listFindingInputs(reader, refs, maxRecords);
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
});

/** One incident as the incidents start page lists it. */
export type IncidentSummary = {
  requestRef: string;
  records: number;
  lastAt: Date;
  agent: string | null;
  principal: string;
  findings: number;
  kinds: FindingKind[];
};

/** Summaries of some incidents, in the order given (references with no readable records are left out). */
export async function summarizeIncidents(
  reader: Actor,
  refs: string[],
  maxRecords = 20_000,
): Promise<IncidentSummary[]> {
  if (!refs.length) return [];
  const records = await listFindingInputs(reader, refs, maxRecords);
  if (!records.ok) return [];
  const policy = await listPolicy(reader, records.value);
  const byRef = new Map<string, IncidentSummary>();
  for (const group of groupBy(records.value, (r) => r.requestRef)) {
    const found = detectFindings(group, policy);
    const last = group.reduce((a, b) => (b.occurredAt > a.occurredAt ? b : a));
    byRef.set(last.requestRef, {
      requestRef: last.requestRef,
      records: group.length,
      lastAt: last.occurredAt,
      agent: last.agent,
      principal: last.principal,
      findings: found.length,
      kinds: [...new Set(found.map((f) => f.kind))],
    });
  }
  return refs.flatMap((r) => byRef.get(r) ?? []);
}

/** Findings among the given request references (the overview passes the most recently active ones). */
export const countRecentFindings = replicaSafe(async function countRecentFindings(
  reader: Actor,
  refs: string[],
): Promise<{ findings: number; incidents: number }> {
  const records = await listFindingInputs(reader, refs, 20_000);
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
});

/** The findings policy for records of many incidents: grants are read only when a write carries one. */
async function listPolicy(reader: Actor, records: readonly FindingInput[]): Promise<Partial<IncidentPolicy>> {
  const refs = [...new Set(records.filter((r) => r.grantId && needsGrantCheck(r)).map((r) => r.requestRef))];
  return findingPolicy(records, refs.length ? await listRedeemedGrants(reader, refs) : []);
}
