import Link from 'next/link';
import type { ReactNode } from 'react';
import { CategoryBadge, DeliveryBadge } from '@/components/outcomes/outcome-badges';
import { Badge } from '@/components/ui/card';
import { formatDate } from '@/lib/format';
import type { IncidentTimelineEntry } from '@/lib/incidents/timeline';
import { timelineKindLabel } from '@/lib/incidents/types';
import { isUnknownWrite, taskStatusLabel } from '@/lib/outcomes/present';

// Each kind its own mark and colour; the kind is also written out, so colour is never the only cue.
function marker(e: IncidentTimelineEntry): { glyph: string; className: string } {
  switch (e.kind) {
    case 'outcome':
      return {
        glyph: '●',
        className: isUnknownWrite(e.classification)
          ? 'bg-rose-100 text-rose-600'
          : e.classification.delivery === 'completed'
            ? 'bg-emerald-100 text-emerald-600'
            : 'bg-slate-100 text-slate-500',
      };
    case 'approval_requested':
      return { glyph: '?', className: 'bg-indigo-100 text-indigo-700' };
    case 'decision':
      return e.decision === 'approve'
        ? { glyph: '✓', className: 'bg-emerald-100 text-emerald-700' }
        : { glyph: '✕', className: 'bg-rose-100 text-rose-700' };
    case 'grant_issued':
      return { glyph: '◆', className: 'bg-amber-100 text-amber-700' };
    case 'grant_redeemed':
      return { glyph: '▶', className: 'bg-sky-100 text-sky-700' };
    case 'revoked':
      return { glyph: '⊘', className: 'bg-rose-200 text-rose-800' };
    case 'expired':
      return { glyph: '◷', className: 'bg-slate-200 text-slate-600' };
  }
}

const kindTone = {
  outcome: 'neutral',
  approval_requested: 'info',
  decision: 'info',
  grant_issued: 'warn',
  grant_redeemed: 'info',
  revoked: 'bad',
  expired: 'neutral',
} as const;

const approvalLink = (id: string) => (
  <Link
    href={`/approvals/${id}`}
    className="text-xs font-medium text-indigo-700 underline decoration-indigo-300 underline-offset-2 hover:decoration-indigo-700"
    data-testid="approval-link"
  >
    Open approval
  </Link>
);

function Body({ e, position }: { e: IncidentTimelineEntry; position: (recordId: string) => number }): ReactNode {
  switch (e.kind) {
    case 'outcome':
      return (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-xs text-slate-500">#{position(e.recordId)}</span>
            <Link
              href={`/outcomes/${e.recordId}`}
              className="font-mono text-sm font-medium text-indigo-700 underline decoration-indigo-300 underline-offset-2 hover:decoration-indigo-700"
            >
              {e.title}
            </Link>
            <DeliveryBadge delivery={e.classification.delivery} category={e.classification.category} />
            <CategoryBadge category={e.classification.category} />
            {e.idempotencyKey ? (
              <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">
                key {e.idempotencyKey}
                {e.attempt ? ` · attempt ${e.attempt}` : ''}
              </span>
            ) : null}
            {e.grantId ? (
              <span className="rounded bg-amber-50 px-1.5 py-0.5 font-mono text-xs text-amber-800 ring-1 ring-inset ring-amber-200">
                grant {e.grantId}
              </span>
            ) : null}
            {e.approvalId ? approvalLink(e.approvalId) : null}
            {e.earlierRecordId ? (
              <a
                href={position(e.earlierRecordId) ? `#record-${e.earlierRecordId}` : `/outcomes/${e.earlierRecordId}`}
                className="rounded bg-rose-50 px-1.5 py-0.5 text-xs text-rose-800 ring-1 ring-inset ring-rose-200 underline-offset-2 hover:underline"
                data-testid="timeline-refused-for"
              >
                refused because of{' '}
                {position(e.earlierRecordId) ? `#${position(e.earlierRecordId)}` : 'an earlier record'}
              </a>
            ) : null}
            {e.task ? (
              <span
                className="rounded bg-sky-50 px-1.5 py-0.5 font-mono text-xs text-sky-800 ring-1 ring-inset ring-sky-200"
                data-testid="timeline-task"
                title={`MCP task ${e.task.id}`}
              >
                task {taskStatusLabel(e.task)}
              </span>
            ) : null}
          </div>
          {e.detail ? <p className="mt-1 text-sm text-slate-800">{e.detail}</p> : null}
          <p className="mt-0.5 text-xs text-slate-600">
            {e.classification.whatHappened} <span className="text-slate-500">Next: {e.classification.nextStep}</span>
          </p>
        </>
      );
    case 'approval_requested':
      return (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <span className="font-mono text-sm font-medium text-slate-900">
              {e.tool} <span className="font-sans text-slate-500">on</span> {e.server}
            </span>
            <Badge tone="info">
              {e.requiredApprovals
                ? `needs ${e.requiredApprovals} approval${e.requiredApprovals === 1 ? '' : 's'}`
                : 'no approval needed'}
            </Badge>
            {approvalLink(e.approvalId)}
          </div>
          <p className="mt-1 text-sm text-slate-800">{e.summary}</p>
          <p className="mt-0.5 text-xs text-slate-600">
            {e.requestedBy} asks on behalf of <span className="font-mono">{e.principal}</span>
            {e.agent ? <> (agent {e.agent})</> : null} in {e.organization}
            {e.resource ? (
              <>
                {' '}
                · {e.resource.type} {e.resource.id}
              </>
            ) : null}
          </p>
        </>
      );
    case 'decision':
      return (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-sm font-medium text-slate-900" data-testid="decision-reviewer">
              {e.reviewer}
            </span>
            <Badge tone={e.decision === 'approve' ? 'good' : 'bad'}>
              {e.decision === 'approve' ? 'approved' : 'denied'}
            </Badge>
            {approvalLink(e.approvalId)}
          </div>
          <p className="mt-1 text-sm text-slate-800" data-testid="decision-reason">
            <span className="text-slate-500">Reason:</span> {e.reason}
          </p>
        </>
      );
    case 'revoked':
      return (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-sm font-medium text-slate-900">{e.title}</span>
            {approvalLink(e.approvalId)}
          </div>
          <p className="mt-1 text-sm text-slate-800">
            <span className="text-slate-500">Reason:</span> {e.reason || '—'}
          </p>
        </>
      );
    default:
      return (
        <>
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-sm font-medium text-slate-900">{e.title}</span>
            {approvalLink(e.approvalId)}
          </div>
          {e.detail ? <p className="mt-1 text-xs text-slate-600">{e.detail}</p> : null}
        </>
      );
  }
}

/** One entry of the incident timeline: an outcome record or a step of an approval. */
export function TimelineItem({
  entry,
  position,
}: {
  entry: IncidentTimelineEntry;
  position: (recordId: string) => number;
}) {
  const mark = marker(entry);
  return (
    <li
      id={entry.kind === 'outcome' ? `record-${entry.recordId}` : undefined}
      className="relative scroll-mt-6 pl-6"
      data-testid="timeline-entry"
      data-kind={entry.kind}
    >
      <span
        aria-hidden
        className={`absolute -left-3 top-0 flex h-6 w-6 items-center justify-center rounded-full text-xs font-bold ring-4 ring-white ${mark.className}`}
      >
        {mark.glyph}
      </span>
      <div className="mb-0.5 flex flex-wrap items-center gap-2">
        <Badge tone={kindTone[entry.kind]}>{timelineKindLabel[entry.kind]}</Badge>
        <span className="text-xs text-slate-500">{formatDate(entry.at)}</span>
      </div>
      <Body e={entry} position={position} />
    </li>
  );
}
