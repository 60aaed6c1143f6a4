// The timeline in words: the report's one-line rows and the incident's one sentence. Pure.
import { effectiveStatus } from '@/lib/approvals/view';
import type { ApprovalStatus } from '@/lib/approvals/schemas';
import { oneSentence } from './summary';
import { plural, type IncidentApproval, type IncidentTimelineEntry } from './timeline';
import type { IncidentSummary, TimelineEntry } from './types';
const label = (s: string) => s.replaceAll('_', ' ');

/** The report's rows: the same entries, each one line of what and detail. */
export function timelineReportRows(entries: readonly IncidentTimelineEntry[]): TimelineEntry[] {
  return entries.map((e): TimelineEntry => {
    switch (e.kind) {
      case 'outcome':
        return {
          at: e.at,
          kind: e.kind,
          status: `${label(e.classification.delivery)} · ${e.classification.category}`,
          title: e.title,
          detail: [
            e.detail,
            e.idempotencyKey ? `key ${e.idempotencyKey}` : null,
            e.grantId ? `grant ${e.grantId}` : null,
            e.classification.nextStep,
          ]
            .filter(Boolean)
            .join(' — '),
        };
      case 'decision':
        return { at: e.at, kind: e.kind, status: e.decision, title: e.title, detail: `Reason: ${e.reason}` };
      case 'revoked':
        return { at: e.at, kind: e.kind, title: e.title, detail: `Reason: ${e.reason}` };
      default:
        return { at: e.at, kind: e.kind, title: e.title, detail: e.detail };
    }
  });
}

/**
 * The incident's one sentence: what was and was not done, then where its approvals stand
 * ("1 approval request: 1 redeemed."). Without any records it says so rather than "nothing".
 */
export function incidentSentence(
  summary: Pick<IncidentSummary, 'done' | 'notDone' | 'unknown' | 'unknownTools'>,
  approvals: readonly Pick<IncidentApproval, 'status' | 'expiresAt'>[],
  now: Date,
): string {
  const operations = summary.done.length + summary.notDone.length + summary.unknown.length;
  if (!approvals.length) return oneSentence(summary);
  const counts = new Map<ApprovalStatus, number>();
  for (const a of approvals) {
    const status = effectiveStatus(a.status, a.expiresAt, now);
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  const order: ApprovalStatus[] = ['pending', 'approved', 'redeemed', 'denied', 'revoked', 'expired'];
  const states = order
    .filter((s) => counts.has(s))
    .map((s) => `${counts.get(s)} ${s}`)
    .join(', ');
  const head = operations ? oneSentence(summary) : 'No tool calls were recorded.';
  return `${head} ${plural(approvals.length, 'approval request')}: ${states}.`;
}
