'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useDeferredValue, useEffect, useRef, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { EmptyState, Notice } from '@/components/ui/card';
import { cn } from '@/components/ui/cn';
import { useNow } from '@/components/ui/use-now';
import { relativeTime } from '@/lib/approvals/present';
import type { ApprovalView } from '@/lib/approvals/view';
import type { Serialized } from '@/lib/serialize';
import { approvalKeys } from './query-keys';
import { ArgumentChips } from './argument-chips';
import { RiskBadges } from './risk-badges';
import { isTypingTarget } from './keys';
import type { QueueTab } from './queue-tabs';

type Page = Serialized<{ items: ApprovalView[]; nextCursor: string | null }>;
const queueUrl = (tab: QueueTab) => `/api/v1/approvals?status=pending&limit=200${tab === 'all' ? '' : `&queue=${tab}`}`;

async function fetchQueue(tab: QueueTab): Promise<Page> {
  const res = await fetch(queueUrl(tab), { headers: { accept: 'application/json' } });
  if (!res.ok)
    throw new Error(
      res.status === 401
        ? 'Your session has ended: sign in again.'
        : `The queue could not be refreshed (${res.status}).`,
    );
  return res.json();
}

const SOON_MS = 10 * 60_000;
// The rows a first paint shows (more than any screen holds); the rest follow in a background render.
const FIRST_ROWS = 24;
// One grid for every row: columns from lg up, a stacked card below.
const columns =
  'lg:grid lg:grid-cols-[6.5rem_minmax(0,1fr)_minmax(0,2fr)_minmax(0,1fr)_minmax(0,1.1fr)_5.5rem] lg:items-center lg:gap-x-4';

const empty: Record<QueueTab, { title: string; body: string }> = {
  needs_my_decision: {
    title: 'Nothing needs your decision',
    body: 'Requests on your own behalf and ones you already decided are under “Waiting on others”. New requests appear here by themselves.',
  },
  waiting_on_others: { title: 'Nothing waits on others', body: 'No pending request is out of your hands.' },
  all: {
    title: 'Nothing waits for a decision',
    body: 'New requests appear here as agents stage writes; this list refreshes by itself.',
  },
};

/**
 * Pending requests, soonest to expire first, refreshed every few seconds. Keys (outside text
 * fields): j/k move, Enter opens, a/d open the request to approve/deny with the reason focused.
 */
export function ApprovalQueue({ initial, now: serverNow, tab }: { initial: Page; now: number; tab: QueueTab }) {
  const { data, error, isFetching } = useQuery({
    queryKey: approvalKeys.list(`pending:${tab}`),
    queryFn: () => fetchQueue(tab),
    initialData: initial,
    refetchInterval: 5_000,
  });
  // A fresh server render (after a decision, a revisit) is newer than what the cache holds.
  const queryClient = useQueryClient();
  useEffect(() => {
    queryClient.setQueryData(approvalKeys.list(`pending:${tab}`), initial);
  }, [queryClient, tab, initial]);
  const now = useNow(15_000, serverNow);
  const items = data.items;
  // The first rows paint at once and the rest render in the background, interruptibly: a long
  // queue opens as fast as a short one.
  const rendered = useDeferredValue(items.length, Math.min(items.length, FIRST_ROWS));
  const router = useRouter();
  const [selected, setSelected] = useState(-1);
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || isTypingTarget(e.target)) return;
      if (!items.length) return;
      const at = Math.min(selected, items.length - 1);
      const go = (i: number) => {
        e.preventDefault();
        setSelected(i);
        list.current?.querySelectorAll<HTMLAnchorElement>('[data-row-link]')[i]?.focus();
      };
      if (e.key === 'j') go(Math.min(at + 1, items.length - 1));
      else if (e.key === 'k') go(Math.max(at - 1, 0));
      else if (at >= 0 && (e.key === 'a' || e.key === 'd')) {
        e.preventDefault();
        router.push(`/approvals/${items[at].id}?decide=${e.key === 'a' ? 'approve' : 'deny'}`);
      } else if (at >= 0 && e.key === 'Enter' && !(e.target instanceof HTMLAnchorElement)) {
        e.preventDefault();
        router.push(`/approvals/${items[at].id}`);
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [items, selected, router]);

  return (
    <div className="space-y-3">
      <p className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-slate-500" aria-live="polite">
        <span
          className={cn(
            'inline-block h-2 w-2 rounded-full bg-emerald-500',
            isFetching && 'bg-amber-400',
            error && 'bg-rose-500',
          )}
          aria-hidden
        />
        <span>
          {error ? 'Not refreshing' : 'Live: refreshes every 5 seconds'} ·{' '}
          <span data-testid="queue-count">{items.length}</span> in this list
        </span>
        <span className="hidden sm:inline" data-testid="queue-keys">
          · Keys: <kbd className="font-mono">j</kbd>/<kbd className="font-mono">k</kbd> move,{' '}
          <kbd className="font-mono">Enter</kbd> open, <kbd className="font-mono">a</kbd> approve,{' '}
          <kbd className="font-mono">d</kbd> deny
        </span>
      </p>
      {error ? <Notice tone="bad">{(error as Error).message}</Notice> : null}
      {items.length === 0 ? (
        <div data-testid="queue-empty">
          <EmptyState title={empty[tab].title}>{empty[tab].body}</EmptyState>
        </div>
      ) : (
        <div className="rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
          <div
            aria-hidden
            className={cn(
              'hidden border-b border-slate-200 bg-slate-50 px-4 py-2.5 text-xs font-semibold uppercase tracking-wide text-slate-500',
              columns,
            )}
          >
            <span>Expires</span>
            <span>Tool</span>
            <span>What will change</span>
            <span>On behalf of</span>
            <span>Risk</span>
            <span>Approvals</span>
          </div>
          <ul ref={list} aria-label="Pending approval requests" className="divide-y divide-slate-100">
            {items.slice(0, rendered).map((a, i) => {
              const approvals = a.decisions.filter((d) => d.decision === 'approve').length;
              const soon = new Date(a.expiresAt).getTime() - now < SOON_MS;
              const href = `/approvals/${a.id}`;
              return (
                <li
                  key={a.id}
                  data-testid="queue-row"
                  data-selected={i === selected ? 'true' : undefined}
                  onClick={() => setSelected(i)}
                  className={cn(
                    // Rows out of view skip layout and paint until scrolled near: a queue of 200
                    // rows costs about what its visible dozen do.
                    'flex flex-col gap-1 px-4 py-3 text-sm text-slate-700 [contain-intrinsic-size:auto_5rem] [content-visibility:auto]',
                    columns,
                    i === selected && 'bg-indigo-50 ring-2 ring-inset ring-indigo-500',
                  )}
                >
                  <span
                    data-testid="queue-expires"
                    className={cn('order-3 text-slate-600 lg:order-none', soon && 'font-semibold text-rose-700')}
                  >
                    <span className="lg:hidden">Expires </span>
                    {relativeTime(a.expiresAt, now)}
                    {soon ? <span className="sr-only"> (soon)</span> : null}
                  </span>
                  <span className="order-2 min-w-0 lg:order-none">
                    <Link
                      href={href}
                      tabIndex={-1}
                      className="break-all font-mono text-xs font-medium text-indigo-700 hover:underline"
                    >
                      {a.tool.name}
                    </Link>
                    <span className="ml-1 text-xs text-slate-500 lg:ml-0 lg:block">
                      <span className="lg:hidden">on </span>
                      {a.server}
                    </span>
                  </span>
                  <span className="order-1 min-w-0 lg:order-none">
                    <Link
                      href={href}
                      data-row-link
                      className="font-medium text-slate-900 hover:underline focus:outline-none focus-visible:underline lg:font-normal"
                    >
                      {a.summary}
                    </Link>
                    {a.resource ? (
                      <span className="block break-all text-xs text-slate-500">
                        {a.resource.type} {a.resource.id}
                      </span>
                    ) : null}
                    <ArgumentChips preview={a.argumentsPreview} sent={a.argumentsSent} />
                  </span>
                  <span className="order-2 min-w-0 lg:order-none">
                    <span className="break-all">
                      <span className="text-slate-500 lg:hidden">On behalf of </span>
                      {a.principal}
                    </span>
                    <span className="block text-xs text-slate-500">
                      {a.agent ?? 'agent unknown'} · {a.organization}
                    </span>
                  </span>
                  <span className="order-4 min-w-0 lg:order-none">
                    <RiskBadges annotations={a.tool.annotations} trusted={a.annotationsTrusted} />
                  </span>
                  <span className="order-4 tabular-nums lg:order-none" data-testid="queue-approvals">
                    {approvals} of {a.requiredApprovals}
                    <span className="lg:hidden"> approvals</span>
                  </span>
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </div>
  );
}
