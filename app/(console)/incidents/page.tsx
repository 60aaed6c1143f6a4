import { redirect } from 'next/navigation';
import { IncidentList } from '@/components/incidents/incident-list';
import { IncidentSearch } from '@/components/incidents/incident-search';
import { Card, EmptyState, PageHeader } from '@/components/ui/card';
import {
  listFlaggedIncidents,
  listRecentIncidents,
  matchIncidents,
  PARTIAL_MIN,
  summarizeHits,
} from '@/lib/server/incidents';
import { listRecentRequestRefs } from '@/lib/server/outcomes/stats';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Incidents' };

// The overview's findings count covers the same references: the two numbers agree.
const FLAGGED_BASIS = 500;

export default async function IncidentsPage({ searchParams }: { searchParams: Promise<{ q?: string | string[] }> }) {
  const viewer = await requireViewer('incidents.read');
  const raw = (await searchParams).q;
  const q = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
  const hits = q ? await matchIncidents(viewer, q) : [];
  // Only one incident fits: open it (its page reads it; no summary here). Several: list them all,
  // never pick one silently.
  if (hits.length === 1) redirect(`/incidents/${encodeURIComponent(hits[0].requestRef)}`);
  const matches = await summarizeHits(viewer, hits);
  const [flagged, recent] = q
    ? [[], []]
    : await Promise.all([
        listRecentRequestRefs(viewer, FLAGGED_BASIS).then((refs) => listFlaggedIncidents(viewer, refs)),
        listRecentIncidents(viewer, 15),
      ]);
  return (
    <>
      <PageHeader
        title="Incidents"
        description="Everything that happened under one request reference: what was done, what was not, what is unknown, and the unsafe patterns in it."
      />
      <Card title="Look up an incident">
        <IncidentSearch id="incident-search-page" defaultValue={q} className="max-w-xl" />
        <p className="mt-2 text-xs text-slate-500">
          A request reference (or at least {PARTIAL_MIN} characters of one), an idempotency key, an outcome event id, an
          approval id or a grant id.
        </p>
      </Card>
      {q ? (
        <section className="mt-6 space-y-3">
          {matches.length ? (
            <>
              <h2 className="text-sm font-semibold text-slate-900" data-testid="incident-matches-count">
                {matches.length} incidents match “{q}”
              </h2>
              <IncidentList items={matches} label={`Incidents matching ${q}`} testId="incident-matches" />
            </>
          ) : (
            <div data-testid="incident-not-found">
              <EmptyState title={`Nothing matches “${q}”`}>
                Searched request references (whole and in part), idempotency keys, event ids, approval ids and grant ids
                of the outcome records and approval requests you may read. Check for a typo, or ask the agent&apos;s
                owner for the request reference they logged.
              </EmptyState>
            </div>
          )}
        </section>
      ) : (
        <div className="mt-6 grid gap-6 xl:grid-cols-2">
          <section id="flagged" className="min-w-0 space-y-3" aria-labelledby="flagged-title">
            <h2 id="flagged-title" className="text-sm font-semibold text-slate-900">
              Flagged: incidents with findings in the last 24 hours{' '}
              <span className="font-normal text-slate-500" data-testid="flagged-count">
                ({flagged.length})
              </span>
            </h2>
            {flagged.length ? (
              <IncidentList
                items={flagged.map((s) => ({ requestRef: s.requestRef, summary: s }))}
                label="Flagged incidents"
                testId="flagged-incidents"
              />
            ) : (
              <EmptyState title="No findings in the last 24 hours">Unsafe agent behaviour shows up here.</EmptyState>
            )}
          </section>
          <section className="min-w-0 space-y-3" aria-labelledby="recent-title">
            <h2 id="recent-title" className="text-sm font-semibold text-slate-900">
              Recently active
            </h2>
            {recent.length ? (
              <IncidentList
                items={recent.map((s) => ({ requestRef: s.requestRef, summary: s }))}
                label="Recent incidents"
                testId="recent-incidents"
              />
            ) : (
              <EmptyState title="No incidents yet">Incidents appear as agents report tool calls.</EmptyState>
            )}
          </section>
        </div>
      )}
    </>
  );
}
