import { authorize } from '@/lib/auth/permissions';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { FindingCard } from '@/components/incidents/finding-card';
import { TimelineItem } from '@/components/incidents/timeline-item';
import { Badge, Card } from '@/components/ui/card';
import type { ApprovalStatus } from '@/lib/approvals/schemas';
import { formatDate } from '@/lib/format';
import { openIncident } from '@/lib/server/incidents';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Incident' };

function List({
  title,
  items,
  tone,
  testId,
  empty,
}: {
  title: string;
  items: string[];
  tone: string;
  testId: string;
  empty: string;
}) {
  return (
    <section
      className={`rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200 border-t-4 ${tone}`}
      data-testid={testId}
    >
      <h2 className="text-sm font-semibold text-slate-900">
        {title} <span className="text-slate-500">({items.length})</span>
      </h2>
      {items.length ? (
        <ul className="mt-2 space-y-1.5 text-sm text-slate-700">
          {items.map((t, i) => (
            <li key={i}>{t}</li>
          ))}
        </ul>
      ) : (
        <p className="mt-2 text-sm text-slate-500">{empty}</p>
      )}
    </section>
  );
}

// A malformed escape ("%E0%A4%A") names no reference: not found, not a crash.
function decoded(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

const statusTone: Record<ApprovalStatus, 'neutral' | 'good' | 'warn' | 'bad' | 'info'> = {
  pending: 'info',
  approved: 'good',
  redeemed: 'good',
  denied: 'bad',
  revoked: 'bad',
  expired: 'neutral',
};

export default async function IncidentPage({ params }: { params: Promise<{ ref: string }> }) {
  const viewer = await requireViewer('incidents.read');
  const ref = decoded((await params).ref);
  if (ref === null) notFound();
  const found = await openIncident(viewer, ref, 'page');
  if (!found.ok) notFound();
  const incident = found.value;
  const position = (id: string) => incident.records.findIndex((r) => r.id === id) + 1;
  const exportHref = (format: 'markdown' | 'json') =>
    `/api/v1/incidents/${encodeURIComponent(ref)}?format=${format}&download=1`;

  return (
    <>
      <nav className="mb-4 text-sm">
        <Link href="/incidents" className="text-slate-500 hover:text-slate-800">
          ← Incidents
        </Link>
      </nav>
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div>
          <p className="text-xs font-semibold uppercase tracking-wide text-slate-500">Incident</p>
          <h1 className="font-mono text-lg font-semibold text-slate-900">{incident.requestRef}</h1>
          <p className="mt-2 max-w-3xl text-base text-slate-800" data-testid="incident-sentence">
            {incident.sentence}
          </p>
        </div>
        <div className="flex gap-2">
          {authorize(viewer, 'incidents.export') ? (
            <a
              href={exportHref('markdown')}
              className="rounded-md bg-white px-3 py-1.5 text-sm font-medium text-slate-800 ring-1 ring-inset ring-slate-300 hover:bg-slate-50"
              data-testid="download-markdown"
            >
              Download Markdown
            </a>
          ) : null}
          <a
            href={exportHref('json')}
            className="rounded-md bg-white px-3 py-1.5 text-sm font-medium text-slate-800 ring-1 ring-inset ring-slate-300 hover:bg-slate-50"
          >
            Download JSON
          </a>
        </div>
      </div>

      <div className="mb-6 grid gap-4 md:grid-cols-3">
        <List
          title="Done"
          items={incident.summary.done}
          tone="border-t-emerald-500"
          testId="list-done"
          empty="Nothing completed."
        />
        <List
          title="Not done"
          items={incident.summary.notDone}
          tone="border-t-slate-400"
          testId="list-not-done"
          empty="Nothing was refused or blocked."
        />
        <List
          title="Unknown: check before repeating"
          items={incident.summary.unknown}
          tone="border-t-rose-500"
          testId="list-unknown"
          empty="Every write got a trustworthy answer."
        />
      </div>

      <Card
        title={`Findings (${incident.findings.length})`}
        description="Unsafe agent behaviour detected across these records."
        className="mb-6"
      >
        {incident.findings.length ? (
          <ul className="space-y-3">
            {incident.findings.map((f, i) => (
              <FindingCard key={i} finding={f} position={position} />
            ))}
          </ul>
        ) : (
          <p className="text-sm text-slate-500">No unsafe patterns found.</p>
        )}
      </Card>

      {incident.approvals.length ? (
        <Card
          title={`Approval requests (${incident.approvals.length})`}
          description="Staged writes filed under this reference, and where each stands."
          className="mb-6"
        >
          <ul className="divide-y divide-slate-100">
            {incident.approvals.map((a) => (
              <li key={a.id} className="flex flex-wrap items-center gap-2 py-2" data-testid="incident-approval">
                <Badge tone={statusTone[a.status]}>{a.status}</Badge>
                <Link
                  href={`/approvals/${a.id}`}
                  className="font-mono text-sm font-medium text-indigo-700 underline decoration-indigo-300 underline-offset-2 hover:decoration-indigo-700"
                >
                  {a.tool}
                </Link>
                <span className="text-xs text-slate-500">
                  on {a.server} · for {a.principal} · {a.approvals} of {a.requiredApprovals} approval
                  {a.requiredApprovals === 1 ? '' : 's'} · {formatDate(a.createdAt)}
                </span>
                <span className="w-full text-sm text-slate-700">{a.summary}</span>
              </li>
            ))}
          </ul>
        </Card>
      ) : null}

      <Card
        title={`Timeline (${incident.timeline.length})`}
        description="Outcome records and approval steps, oldest first, times in UTC. Attempts of one operation share its idempotency key and arguments."
      >
        <ol className="relative ml-3 space-y-4 border-l border-slate-200">
          {incident.timeline.map((entry, i) => (
            <TimelineItem key={i} entry={entry} position={position} />
          ))}
        </ol>
      </Card>
    </>
  );
}
