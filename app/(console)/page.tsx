import Link from 'next/link';
import { Suspense } from 'react';
import { DeliveryChart } from '@/components/outcomes/delivery-chart';
import { CategoryBadge } from '@/components/outcomes/outcome-badges';
import { Card, PageHeader } from '@/components/ui/card';
import { authorize } from '@/lib/auth/permissions';
import { formatDate } from '@/lib/format';
import { categoryLabel, deliveryLabel } from '@/lib/outcomes/present';
import type { Delivery } from '@/lib/outcomes/schemas';
import { countRecentFindings } from '@/lib/server/incidents';
import { getOverviewStats, listRecentRequestRefs, type OverviewStats } from '@/lib/server/outcomes/stats';
import { listOutcomes } from '@/lib/server/outcomes';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Overview' };

// Findings are computed per incident; the overview analyses the most recently active ones.
const RECENT_REFS = 500;

const tiles: { delivery: Delivery; tone: string }[] = [
  { delivery: 'completed', tone: 'text-emerald-700' },
  { delivery: 'rejected', tone: 'text-amber-700' },
  { delivery: 'never_sent', tone: 'text-slate-600' },
  { delivery: 'unknown', tone: 'text-rose-700' },
];

function Window({ title, stats, params }: { title: string; stats: OverviewStats['last24h']; params: string }) {
  return (
    <Card title={title} description={`${stats.total} tool calls reported`}>
      <div className="grid grid-cols-2 gap-3 sm:grid-cols-4">
        {tiles.map(({ delivery, tone }) => (
          <Link
            key={delivery}
            href={`/outcomes?delivery=${delivery}${params}`}
            className="rounded-md p-3 ring-1 ring-slate-200 hover:bg-slate-50"
            data-testid={`tile-${delivery}`}
          >
            <span className="block text-xs font-medium text-slate-500">{deliveryLabel[delivery]}</span>
            <span className={`mt-1 block text-2xl font-semibold tabular-nums ${tone}`}>
              {stats.byDelivery[delivery]}
            </span>
          </Link>
        ))}
      </div>
      <p className="mt-3 text-sm text-slate-700">
        <span className="font-semibold text-rose-700" data-testid="unknown-writes-count">
          {stats.unknownWrites}
        </span>{' '}
        unresolved unknown-outcome writes: each may have changed something, check state before any retry.
      </p>
      {stats.byCategory.length ? (
        <ul className="mt-3 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600">
          {stats.byCategory.slice(0, 10).map((c) => (
            <li key={c.category}>
              <Link href={`/outcomes?category=${c.category}${params}`} className="hover:text-indigo-700">
                {categoryLabel(c.category)} <span className="font-semibold tabular-nums">{c.count}</span>
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
    </Card>
  );
}

type RecentFindings = { recentRefs: string[]; recentFindings: { findings: number; incidents: number } };

/** The findings card: streamed in after the counts (it analyses every record of 500 incidents). */
async function FindingsCard({ pending }: { pending: Promise<RecentFindings> }) {
  const { recentRefs, recentFindings } = await pending;
  return (
    <Card
      title="Findings in the last 24 hours"
      description={`Unsafe agent behaviour across the ${recentRefs.length === RECENT_REFS ? `${RECENT_REFS} most recently active` : recentRefs.length} request references with records in the last 24 hours.`}
      actions={
        <Link href="/incidents" className="text-sm font-medium text-indigo-600 hover:text-indigo-500">
          Look up an incident →
        </Link>
      }
    >
      <p className="text-sm text-slate-700">
        <Link href="/incidents#flagged" className="hover:underline" data-testid="findings-link">
          <span className="text-2xl font-semibold tabular-nums text-amber-700" data-testid="findings-count">
            {recentFindings.findings}
          </span>{' '}
          findings in <span className="font-semibold tabular-nums">{recentFindings.incidents}</span> incidents
        </Link>
        . Findings show as ⚠ badges in the outcome list and in full on each incident.
      </p>
    </Card>
  );
}

export default async function OverviewPage() {
  const viewer = await requireViewer();
  // The findings follow the references they count, alongside the counts (not after them), and
  // stream in on their own: ~5,000 records analysed at 1M records, several times the counts' time.
  const findings: Promise<RecentFindings> = listRecentRequestRefs(viewer, RECENT_REFS).then(async (recentRefs) => ({
    recentRefs,
    recentFindings: await countRecentFindings(viewer, recentRefs),
  }));
  findings.catch(() => {}); // awaited by FindingsCard; not an unhandled rejection if the page fails first
  const [stats, unknown] = await Promise.all([
    getOverviewStats(viewer),
    listOutcomes(viewer, { resolution: 'unresolved', readOnly: false, limit: 8 }),
  ]);
  if (!stats.ok || !unknown.ok) throw new Error('overview refused a signed-in viewer');
  const from = (iso: string) => `&from=${encodeURIComponent(iso)}`;

  if (stats.value.last7d.total === 0) {
    return (
      <>
        <PageHeader title="Overview" description="What your agents did, did not do, and are waiting to do." />
        <Card
          title="No outcome records in the last seven days"
          description="Countersign shows outcomes once agents report them."
        >
          <ol className="list-decimal space-y-2 pl-5 text-sm text-slate-700">
            <li>
              {authorize(viewer, 'apikeys.manage') ? (
                <>
                  Create an API key with the <code className="font-mono text-xs">outcomes:write</code> scope on{' '}
                  <Link className="text-indigo-600 hover:underline" href="/admin/api-keys">
                    API keys
                  </Link>
                  .
                </>
              ) : (
                'Ask an admin for an API key with the outcomes:write scope for your agent runtime.'
              )}
            </li>
            <li>
              Point your agent runtime or MCP gateway at{' '}
              <code className="font-mono text-xs">POST /api/v1/outcomes</code>.
            </li>
          </ol>
        </Card>
      </>
    );
  }

  return (
    <>
      <PageHeader
        title="Overview"
        description="What your agents did, did not do, and what may have happened without an answer. Times in UTC."
      />
      <div className="space-y-6">
        <div className="grid gap-6 xl:grid-cols-2">
          <Window title="Last 24 hours" stats={stats.value.last24h} params={from(stats.value.since.h24)} />
          <Window title="Last 7 days" stats={stats.value.last7d} params={from(stats.value.since.d7)} />
        </div>
        <Suspense
          fallback={
            <Card title="Findings in the last 24 hours" description="Analysing the most recently active incidents…">
              <p className="h-8 text-sm text-slate-500" data-testid="findings-loading">
                Counting findings…
              </p>
            </Card>
          }
        >
          <FindingsCard pending={findings} />
        </Suspense>
        <Card title="Tool calls over the last 7 days" description="Per six hours, by delivery state">
          <DeliveryChart series={stats.value.series} />
        </Card>
        <Card
          title="Latest unresolved unknown writes"
          description="Sent, with no trustworthy answer: they may have taken effect."
          actions={
            <Link
              href="/outcomes?resolution=unresolved&readOnly=false"
              className="text-sm font-medium text-indigo-600 hover:text-indigo-500"
            >
              All →
            </Link>
          }
        >
          {unknown.value.items.length === 0 ? (
            <p className="text-sm text-slate-500">None. Every write got a trustworthy answer.</p>
          ) : (
            <ul className="divide-y divide-slate-100">
              {unknown.value.items.map((r) => (
                <li key={r.id} className="flex flex-wrap items-center justify-between gap-2 py-2.5">
                  <div className="min-w-0">
                    <Link
                      href={`/outcomes/${r.id}`}
                      className="font-mono text-sm font-medium text-indigo-700 hover:underline"
                    >
                      {r.tool.name}
                    </Link>
                    <span className="ml-2 text-sm text-slate-700">{r.summary}</span>
                    <span className="block text-xs text-slate-500">
                      {r.requestRef} · {r.organization} · {formatDate(r.occurredAt)}
                    </span>
                  </div>
                  <CategoryBadge category={r.classification.category} />
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}
