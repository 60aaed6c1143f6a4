import Link from 'next/link';
import { ApprovalQueue } from '@/components/approvals/approval-queue';
import { PageHeader } from '@/components/ui/card';
import { authorize } from '@/lib/auth/permissions';
import { serialize } from '@/lib/serialize';
import { listApprovals } from '@/lib/server/data/approvals';
import { requireViewer } from '@/lib/server/http/session';

export const metadata = { title: 'Approvals' };

export default async function ApprovalsPage() {
  const viewer = await requireViewer('approvals.read');
  const page = await listApprovals(viewer, { status: 'pending', limit: 200 });
  if (!page.ok) throw new Error('listApprovals refused a signed-in viewer');
  return (
    <>
      <PageHeader
        title="Approvals"
        description="Writes your agents staged, waiting for a decision. Soonest to expire first. A request acting on your own behalf is never yours to approve."
        actions={
          authorize(viewer, 'approval.revoke') ? (
            <Link href="/admin/authorizations" className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
              Authorizations →
            </Link>
          ) : null
        }
      />
      {/* eslint-disable-next-line react-hooks/purity -- the server's clock seeds the client's relative times once */}
      <ApprovalQueue initial={serialize(page.value)} now={Date.now()} />
    </>
  );
}
