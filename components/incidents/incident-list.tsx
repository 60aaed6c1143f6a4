import Link from 'next/link';
import { Badge } from '@/components/ui/card';
import { formatDate } from '@/lib/format';
import { findingLabel } from '@/lib/incidents/findings';
import type { IncidentSummary } from '@/lib/server/incidents';

export type IncidentListItem = { requestRef: string; matchedBy?: string[]; summary: IncidentSummary | null };

/** Incidents as cards that read the same at any width: reference, what matched, activity, findings. */
export function IncidentList({ items, label, testId }: { items: IncidentListItem[]; label: string; testId: string }) {
  return (
    <ul
      aria-label={label}
      data-testid={testId}
      className="divide-y divide-slate-100 rounded-lg bg-white shadow-xs ring-1 ring-slate-200"
    >
      {items.map(({ requestRef, matchedBy, summary }) => (
        <li
          key={requestRef}
          data-testid="incident-item"
          className="flex flex-col gap-1 px-4 py-3 sm:flex-row sm:items-start sm:justify-between sm:gap-4"
        >
          <div className="min-w-0">
            <Link
              href={`/incidents/${encodeURIComponent(requestRef)}`}
              className="break-all font-mono text-sm font-medium text-indigo-700 hover:underline"
            >
              {requestRef}
            </Link>
            <p className="text-xs text-slate-500">
              {summary
                ? `${summary.records} ${summary.records === 1 ? 'record' : 'records'} · last ${formatDate(summary.lastAt)} · ${summary.agent ?? 'agent unknown'} for ${summary.principal}`
                : 'Approval requests only, no outcome record yet'}
              {matchedBy?.length ? ` · matched by ${matchedBy.join(', ')}` : ''}
            </p>
          </div>
          {summary?.findings ? (
            <div className="flex flex-wrap gap-1 sm:justify-end">
              <Badge tone="warn">
                ⚠ {summary.findings} {summary.findings === 1 ? 'finding' : 'findings'}
              </Badge>
              {summary.kinds.map((k) => (
                <Badge key={k}>{findingLabel[k]}</Badge>
              ))}
            </div>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
