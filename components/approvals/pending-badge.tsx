'use client';
import { useEffect } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { approvalKeys } from './query-keys';

/**
 * How many requests need the viewer's own decision (the queue's first tab), in the navigation.
 * A decision sets it at once (the server's fresh count, BadgeSync); the poll only picks up requests
 * others staged or decided. People who cannot decide get 0 from the server and no badge.
 */
export function PendingBadge({ initial }: { initial: number }) {
  // The server's count is the newest whenever the layout renders again (a decision revalidates it).
  useBadgeCount(initial);
  const { data } = useQuery({
    queryKey: approvalKeys.pendingCount(),
    queryFn: async () => {
      const res = await fetch('/api/v1/approvals/pending-count');
      if (!res.ok) throw new Error(String(res.status));
      return ((await res.json()) as { pending: number }).pending;
    },
    initialData: initial,
    refetchInterval: 10_000,
  });
  if (!data) return null;
  return (
    <span
      data-testid="pending-count"
      aria-label={`${data} need your decision`}
      className="ml-auto rounded-full bg-amber-400 px-2 py-0.5 text-xs font-semibold text-slate-900 tabular-nums"
    >
      {data}
    </span>
  );
}

function useBadgeCount(count: number) {
  const queryClient = useQueryClient();
  useEffect(() => {
    queryClient.setQueryData(approvalKeys.pendingCount(), count);
  }, [queryClient, count]);
}

/** Sets the badge to a count the server just computed (the page after a decision renders one). */
export function BadgeSync({ count }: { count: number }) {
  useBadgeCount(count);
  return null;
}
