import Link from 'next/link';
import { CursorPager } from '@/components/ui/cursor-pager';
import { firstValues, withParams } from '@/lib/url';
import { OutcomeFilters } from '@/components/outcomes/outcome-filters';
import { CategoryBadge, DeliveryBadge } from '@/components/outcomes/outcome-badges';
import { EmptyState, Notice, PageHeader } from '@/components/ui/card';
import { Table, Td, wideOnly } from '@/components/ui/table';
import { cn } from '@/components/ui/cn';
import { formatDate } from '@/lib/format';
import { outcomeQuerySchema } from '@/lib/outcomes/query';
import { isUnknownWrite, retryLabel } from '@/lib/outcomes/present';
import { fieldErrors } from '@/lib/result';
import { listOutcomes } from '@/lib/server/outcomes';
import { findingsByRecord } from '@/lib/server/incidents';
import { findingLabel } from '@/lib/incidents/findings';
import type { FindingKind } from '@/lib/incidents/types';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Outcomes' };

type Search = Record<string, string | string[] | undefined>;

// datetime-local inputs send "2026-11-30T12:00"; the console shows UTC, so read them as UTC.
const asUtc = (v: string | undefined) => (v && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v) ? `${v}:00Z` : v);

const quickViews: { label: string; params: Record<string, string> }[] = [
  { label: 'All', params: {} },
  { label: 'Unknown writes', params: { delivery: 'unknown', readOnly: 'false' } },
  { label: 'Unresolved unknown writes', params: { resolution: 'unresolved', readOnly: 'false' } },
  { label: 'Resolved unknown writes', params: { resolution: 'resolved', readOnly: 'false' } },
  { label: 'Never sent', params: { delivery: 'never_sent' } },
  { label: 'Rejected', params: { delivery: 'rejected' } },
  { label: 'Completed', params: { delivery: 'completed' } },
];

export default async function OutcomesPage({ searchParams }: { searchParams: Promise<Search> }) {
  const viewer = await requireViewer('outcomes.read');
  const values = firstValues(await searchParams);
  const parsed = outcomeQuerySchema.safeParse({ ...values, from: asUtc(values.from), to: asUtc(values.to) });
  const page = parsed.success ? await listOutcomes(viewer, parsed.data) : null;
  const findings = page?.ok
    ? await findingsByRecord(
        viewer,
        page.value.items.map((r) => r.requestRef),
      )
    : new Map<string, FindingKind[]>();
  const filtered = Object.entries(values).some(([k, v]) => v && k !== 'cursor' && k !== 'order');
  const oldestFirst = values.order === 'oldest';

  return (
    <>
      <PageHeader
        title="Outcomes"
        description="Every tool call your agents reported, classified by where it failed, whether it ran, and what to do next. Newest first (sort by time to reverse); times in UTC."
      />
      <nav aria-label="Quick views" className="mb-4 flex flex-wrap gap-2">
        {quickViews.map((q) => {
          const active =
            Object.entries(q.params).every(([k, v]) => values[k] === v) &&
            Object.keys(q.params).length ===
              Object.keys(values).filter((k) => values[k] && k !== 'cursor' && k !== 'order').length;
          return (
            <Link
              key={q.label}
              href={withParams('/outcomes', {}, q.params)}
              aria-current={active ? 'page' : undefined}
              className={`rounded-full px-3 py-1 text-sm font-medium ring-1 ring-inset ${active ? 'bg-indigo-600 text-white ring-indigo-600' : 'bg-white text-slate-700 ring-slate-300 hover:bg-slate-50'}`}
            >
              {q.label}
            </Link>
          );
        })}
      </nav>
      <details className="mb-6" open={filtered}>
        <summary className="mb-3 cursor-pointer text-sm font-medium text-slate-700">Filters</summary>
        <OutcomeFilters values={values} />
      </details>

      {!parsed.success ? (
        <Notice tone="bad" testId="filter-error">
          These filters cannot be applied:{' '}
          {fieldErrors(parsed.error.issues)
            .map((e) => `${e.path} ${e.message}`)
            .join('; ')}
          .
        </Notice>
      ) : !page?.ok ? (
        <Notice tone="bad">Your role cannot read outcome records.</Notice>
      ) : page.value.items.length === 0 ? (
        filtered ? (
          <EmptyState
            title="No records match these filters"
            action={
              <Link className="text-sm font-medium text-indigo-600" href="/outcomes">
                Clear filters
              </Link>
            }
          >
            Try a wider time range or fewer filters.
          </EmptyState>
        ) : (
          <EmptyState title="No outcome records yet">
            Agent runtimes and gateways post records to <code className="font-mono text-xs">POST /api/v1/outcomes</code>{' '}
            with an API key that has the <code className="font-mono text-xs">outcomes:write</code> scope.
          </EmptyState>
        )
      ) : (
        <>
          <Table
            head={[
              {
                label: 'Time',
                sort: {
                  href: withParams('/outcomes', values, {
                    cursor: undefined,
                    order: oldestFirst ? undefined : 'oldest',
                  }),
                  dir: oldestFirst ? 'asc' : 'desc',
                },
              },
              'Tool',
              'What happened',
              'Outcome',
              { label: 'Next step', wide: true },
              'Request reference',
            ]}
            caption="Outcome records"
          >
            {page.value.items.map((r) => {
              const unknownWrite = isUnknownWrite(r.classification);
              return (
                <tr key={r.id} data-testid="outcome-row" className={unknownWrite ? 'bg-rose-50/60' : undefined}>
                  <Td className="text-xs tabular-nums text-slate-600">{formatDate(r.occurredAt)}</Td>
                  <Td>
                    <Link
                      href={`/outcomes/${r.id}`}
                      className="font-mono text-xs font-medium text-indigo-700 hover:underline"
                    >
                      {r.tool.name}
                    </Link>
                    <span className="block text-xs text-slate-500">{r.server}</span>
                  </Td>
                  {/* The summary takes what room is left (truncated, whole on hover): Request stays in view.
                      On a phone's card it wraps to three lines, above who it was for. */}
                  <Td className="w-full min-w-40 max-w-0">
                    <div className="min-w-0 flex-1">
                      <span
                        className="block truncate text-sm text-slate-800 max-md:line-clamp-3 max-md:whitespace-normal"
                        title={r.summary ?? undefined}
                      >
                        {r.summary ?? <span className="text-slate-500">no summary</span>}
                      </span>
                      <span className="block truncate text-xs text-slate-500">
                        {r.organization} · {r.principal}
                        {r.attempt && r.attempt > 1 ? ` · attempt ${r.attempt}` : ''}
                      </span>
                    </div>
                  </Td>
                  <Td className="whitespace-normal">
                    <div className="flex w-48 flex-wrap items-center gap-x-2 gap-y-1 max-md:w-auto">
                      <DeliveryBadge delivery={r.classification.delivery} category={r.classification.category} />
                      <CategoryBadge category={r.classification.category} />
                      {unknownWrite ? (
                        <span className="text-xs font-semibold text-rose-700">Write may have happened</span>
                      ) : null}
                      {(findings.get(r.id) ?? []).map((kind) => (
                        <Link
                          key={kind}
                          href={`/incidents/${encodeURIComponent(r.requestRef)}`}
                          data-testid="finding-badge"
                          className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900 hover:bg-amber-200"
                        >
                          ⚠ {findingLabel[kind]}
                        </Link>
                      ))}
                    </div>
                  </Td>
                  <Td className={cn('w-32 min-w-32 whitespace-normal text-xs text-slate-600', wideOnly)}>
                    {retryLabel[r.classification.retry]}
                  </Td>
                  <Td>
                    <Link
                      href={withParams('/outcomes', {}, { requestRef: r.requestRef })}
                      // One line: a long reference is cut short (whole in the tooltip and on the record)
                      // rather than wrap the row or push it past a 1280 px screen.
                      className="block max-w-56 truncate font-mono text-xs text-slate-600 hover:text-indigo-700"
                      title={r.requestRef}
                      data-testid="request-ref"
                    >
                      {r.requestRef}
                    </Link>
                  </Td>
                </tr>
              );
            })}
          </Table>
          <CursorPager
            count={page.value.items.length}
            noun="records"
            oldestFirst={oldestFirst}
            backHref={values.cursor ? withParams('/outcomes', values, { cursor: undefined }) : null}
            olderHref={
              page.value.nextCursor ? withParams('/outcomes', values, { cursor: page.value.nextCursor }) : null
            }
          />
        </>
      )}
    </>
  );
}
