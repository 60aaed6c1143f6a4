import Link from 'next/link';
import { ApprovalQueue } from '@/components/approvals/approval-queue';
import { queueTabs, type QueueTab } from '@/components/approvals/queue-tabs';
import { PageHeader } from '@/components/ui/card';
import { cn } from '@/components/ui/cn';
import { authorize } from '@/lib/auth/permissions';
import { serialize } from '@/lib/serialize';
import { listApprovals } from '@/lib/server/approvals';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Approvals' };

type Search = Promise<{ tab?: string | string[] }>;

export default async function ApprovalsPage({ searchParams }: { searchParams: Search }) {
  const viewer = await requireViewer('approvals.read');
  const canDecide = authorize(viewer, 'approval.decide');
  const asked = (await searchParams).tab;
  // People who cannot decide (support) have no queue of their own: they see every pending request.
  const tab: QueueTab = !canDecide ? 'all' : (queueTabs.find((t) => t.tab === asked)?.tab ?? 'needs_my_decision');
  const page = await listApprovals(viewer, {
    status: 'pending',
    queue: tab === 'all' ? undefined : tab,
    limit: 200,
  });
  if (!page.ok) throw new Error('listApprovals refused a signed-in viewer');
  return (
    <>
      <PageHeader
        title="Approvals"
        description={
          canDecide
            ? 'Writes your agents staged, soonest to expire first. “Needs my decision” leaves out requests on your own behalf and ones you already decided.'
            : 'Writes your agents staged, soonest to expire first. Your role reviews but does not decide.'
        }
        actions={
          authorize(viewer, 'approval.revoke') ? (
            <Link href="/admin/authorizations" className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
              Authorizations →
            </Link>
          ) : null
        }
      />
      {canDecide ? (
        <nav aria-label="Queues" className="mb-4 flex flex-wrap gap-2">
          {queueTabs.map((t) => (
            <Link
              key={t.tab}
              href={t.tab === 'needs_my_decision' ? '/approvals' : `/approvals?tab=${t.tab}`}
              aria-current={t.tab === tab ? 'page' : undefined}
              className={cn(
                'rounded-full bg-white px-3 py-1 text-sm font-medium text-slate-700 ring-1 ring-inset ring-slate-300 hover:bg-slate-50',
                t.tab === tab && 'bg-indigo-600 text-white ring-indigo-600 hover:bg-indigo-600',
              )}
            >
              {t.label}
            </Link>
          ))}
        </nav>
      ) : null}
      {/* eslint-disable-next-line react-hooks/purity -- the server's clock seeds the client's relative times once */}
      <ApprovalQueue key={tab} initial={serialize(page.value)} now={Date.now()} tab={tab} />
    </>
  );
}
