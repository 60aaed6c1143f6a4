import { EmptyState, PageHeader } from '@/components/ui/card';
import { requireViewer } from '@/lib/server/session';

export const metadata = { title: 'Outcomes' };

export default async function OutcomesPage() {
  await requireViewer('outcomes.read');
  return (
    <>
      <PageHeader title="Outcomes" description="Every tool call your agents reported, classified by where it failed, whether it ran, and what to do next." />
      <EmptyState title="No outcome records yet">
        Agent runtimes and gateways post records to <code className="font-mono text-xs">POST /api/v1/outcomes</code> with an API key that has the <code className="font-mono text-xs">outcomes:write</code> scope.
      </EmptyState>
    </>
  );
}
