import { redirect } from 'next/navigation';
import { IncidentSearch } from '@/components/incidents/incident-search';
import { Card, EmptyState, PageHeader } from '@/components/ui/card';
import { resolveIncidentRef } from '@/lib/server/data/incidents';
import { requireViewer } from '@/lib/server/http/session';

export const metadata = { title: 'Incidents' };

export default async function IncidentsPage({ searchParams }: { searchParams: Promise<{ q?: string | string[] }> }) {
  const viewer = await requireViewer('incidents.read');
  const raw = (await searchParams).q;
  const q = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
  if (q) {
    const ref = await resolveIncidentRef(viewer, q);
    if (ref) redirect(`/incidents/${encodeURIComponent(ref)}`);
  }
  return (
    <>
      <PageHeader
        title="Incidents"
        description="Everything that happened under one request reference: what was done, what was not, what is unknown, and the unsafe patterns in it."
      />
      <Card title="Look up an incident">
        <IncidentSearch id="incident-search-page" defaultValue={q} className="max-w-xl" />
        <p className="mt-2 text-xs text-slate-500">
          Paste a request reference, an idempotency key, an outcome event id, an approval id or a grant id.
        </p>
      </Card>
      {q ? (
        <div className="mt-6" data-testid="incident-not-found">
          <EmptyState title={`Nothing matches “${q}”`}>
            Searched request references, idempotency keys, event ids, approval ids and grant ids of the outcome records
            and approval requests you may read. Check for a typo, or ask the agent&apos;s owner for the request
            reference they logged.
          </EmptyState>
        </div>
      ) : null}
    </>
  );
}
