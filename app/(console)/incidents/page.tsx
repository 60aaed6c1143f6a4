import { EmptyState, PageHeader } from '@/components/ui/card';
import { requireViewer } from '@/lib/server/session';

export const metadata = { title: 'Incidents' };

export default async function IncidentsPage() {
  await requireViewer('incidents.read');
  return (
    <>
      <PageHeader title="Incidents" description="Everything that happened under one request reference, in order." />
      <EmptyState title="No incidents to show yet">
        Once agents report outcomes, look up a request reference here to see what was and was not done.
      </EmptyState>
    </>
  );
}
