'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { EmptyState, Notice } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { useNow } from '@/components/ui/use-now';
import { relativeTime } from '@/lib/approvals/present';
import type { ApprovalView } from '@/lib/approvals/view';
import type { Serialized } from '@/lib/serialize';
import { approvalKeys } from './query-keys';
import { RiskBadges } from './risk-badges';

type Page = Serialized<{ items: ApprovalView[]; nextCursor: string | null }>;

async function fetchPending(): Promise<Page> {
  const res = await fetch('/api/v1/approvals?status=pending&limit=200', { headers: { accept: 'application/json' } });
  if (!res.ok)
    throw new Error(
      res.status === 401
        ? 'Your session has ended: sign in again.'
        : `The queue could not be refreshed (${res.status}).`,
    );
  return res.json();
}

/** Pending requests, soonest to expire first, refreshed every few seconds without a reload. */
export function ApprovalQueue({ initial, now: serverNow }: { initial: Page; now: number }) {
  const { data, error, isFetching } = useQuery({
    queryKey: approvalKeys.list('pending'),
    queryFn: fetchPending,
    initialData: initial,
    refetchInterval: 5_000,
  });
  const now = useNow(15_000, serverNow);
  const items = data.items;
  return (
    <div className="space-y-3">
      <p className="flex items-center gap-2 text-xs text-slate-500" aria-live="polite">
        <span
          className={`inline-block h-2 w-2 rounded-full ${error ? 'bg-rose-500' : isFetching ? 'bg-amber-400' : 'bg-emerald-500'}`}
          aria-hidden
        />
        {error ? 'Not refreshing' : 'Live: refreshes every 5 seconds'} · {items.length} waiting
      </p>
      {error ? <Notice tone="bad">{(error as Error).message}</Notice> : null}
      {items.length === 0 ? (
        <EmptyState title="Nothing waits for a decision">
          New requests appear here as agents stage writes; this list refreshes by itself.
        </EmptyState>
      ) : (
        <Table
          head={['Expires', 'Tool', 'What will change', 'On behalf of', 'Risk', 'Approvals']}
          caption="Pending approval requests"
        >
          {items.map((a) => {
            const approvals = a.decisions.filter((d) => d.decision === 'approve').length;
            const soon = new Date(a.expiresAt).getTime() - now < 10 * 60_000;
            return (
              <tr key={a.id} data-testid="queue-row">
                <Td className={soon ? 'font-semibold text-rose-700' : 'text-slate-600'}>
                  {relativeTime(a.expiresAt, now)}
                </Td>
                <Td>
                  <Link
                    href={`/approvals/${a.id}`}
                    className="font-mono text-xs font-medium text-indigo-700 hover:underline"
                  >
                    {a.tool.name}
                  </Link>
                  <span className="block text-xs text-slate-500">{a.server}</span>
                </Td>
                <Td className="min-w-48 whitespace-normal">
                  <Link href={`/approvals/${a.id}`} className="text-sm text-slate-900 hover:underline">
                    {a.summary}
                  </Link>
                  {a.resource ? (
                    <span className="block text-xs text-slate-500">
                      {a.resource.type} {a.resource.id}
                    </span>
                  ) : null}
                </Td>
                <Td>
                  <span className="text-sm">{a.principal}</span>
                  <span className="block text-xs text-slate-500">
                    {a.agent ?? 'agent unknown'} · {a.organization}
                  </span>
                </Td>
                <Td className="min-w-40 whitespace-normal">
                  <RiskBadges annotations={a.tool.annotations} trusted={a.annotationsTrusted} />
                </Td>
                <Td className="tabular-nums">
                  {approvals} of {a.requiredApprovals}
                </Td>
              </tr>
            );
          })}
        </Table>
      )}
    </div>
  );
}
