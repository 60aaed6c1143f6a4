import { EmptyState, PageHeader } from '@/components/ui/card';
import { requireViewer } from '@/lib/server/session';

export const metadata = { title: 'Approvals' };

export default async function ApprovalsPage() {
  await requireViewer('approvals.read');
  return (
    <>
      <PageHeader title="Approvals" description="Writes your agents staged, waiting for a reviewer's decision." />
      <EmptyState title="No approval requests">
        Agents stage a write with <code className="font-mono text-xs">POST /api/v1/approvals</code>; pending requests appear here for reviewers.
      </EmptyState>
    </>
  );
}
