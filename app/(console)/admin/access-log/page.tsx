import Link from 'next/link';
import { CursorPager } from '@/components/ui/cursor-pager';
import { firstValues, withParams } from '@/lib/url';
import { Button } from '@/components/ui/button';
import { Badge, EmptyState, Notice, PageHeader } from '@/components/ui/card';
import { Input } from '@/components/ui/field';
import { Table, Td } from '@/components/ui/table';
import { formatDate } from '@/lib/format';
import { accessLogQuerySchema, actorKindLabel, formatLabel } from '@/lib/incidents/access-log';
import { fieldErrors } from '@/lib/result';
import { listIncidentAccess } from '@/lib/server/incidents/access-log';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Incident access log' };

type Search = Record<string, string | string[] | undefined>;

export default async function AccessLogPage({ searchParams }: { searchParams: Promise<Search> }) {
  const viewer = await requireViewer('audit.read');
  const values = firstValues(await searchParams);
  const parsed = accessLogQuerySchema.safeParse(values);
  const page = parsed.success ? await listIncidentAccess(viewer, parsed.data) : null;
  if (page && !page.ok) throw new Error('listIncidentAccess refused an admin');
  const filtered = !!(values.requestRef || values.actor);

  return (
    <>
      <PageHeader
        title="Incident access log"
        description="Who opened which incident, and how: every incident page view, API read and export. Newest first; times in UTC."
      />
      <form
        method="get"
        action="/admin/access-log"
        aria-label="Filter the access log"
        className="mb-6 flex flex-wrap items-end gap-3 rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200"
      >
        <label className="block text-xs font-medium text-slate-600">
          Request reference
          <Input
            name="requestRef"
            defaultValue={values.requestRef ?? ''}
            placeholder="req_… (exact)"
            className="mt-1 w-64 py-1.5"
          />
        </label>
        <label className="block text-xs font-medium text-slate-600">
          Actor
          <Input
            name="actor"
            defaultValue={values.actor ?? ''}
            placeholder="email or api_key:…"
            className="mt-1 w-64 py-1.5"
          />
        </label>
        <Button type="submit" size="sm">
          Filter
        </Button>
        {filtered ? (
          <Link href="/admin/access-log" className="text-sm font-medium text-slate-600 hover:text-slate-900">
            Clear
          </Link>
        ) : null}
      </form>

      {!parsed.success ? (
        <Notice tone="bad" testId="filter-error">
          These filters cannot be applied:{' '}
          {fieldErrors(parsed.error.issues)
            .map((e) => `${e.path} ${e.message}`)
            .join('; ')}
          .
        </Notice>
      ) : !page?.ok ? null : page.value.items.length === 0 ? (
        <EmptyState title={filtered ? 'No access matches these filters' : 'No incident has been opened yet'}>
          {filtered
            ? 'The reference must match exactly; the actor may be part of an email or key id.'
            : 'Each incident page view, API read and export will appear here.'}
        </EmptyState>
      ) : (
        <>
          <Table head={['Time', 'Actor', 'How', 'Request reference', 'Format']} caption="Incident access log">
            {page.value.items.map((e) => (
              <tr key={e.id} data-testid="access-row">
                <Td className="text-xs">{formatDate(e.at)}</Td>
                <Td>
                  <Link
                    href={withParams('/admin/access-log', {}, { actor: e.actor })}
                    className="text-sm text-slate-900 hover:text-indigo-700"
                    data-testid="access-actor"
                  >
                    {e.actor}
                  </Link>
                  {e.keyName ? <span className="block text-xs text-slate-500">{e.keyName}</span> : null}
                </Td>
                <Td>
                  <Badge>{actorKindLabel[e.actorKind] ?? e.actorKind}</Badge>
                </Td>
                <Td>
                  <Link
                    href={withParams('/admin/access-log', {}, { requestRef: e.requestRef })}
                    className="font-mono text-xs text-slate-700 hover:text-indigo-700"
                    data-testid="access-ref"
                  >
                    {e.requestRef}
                  </Link>
                </Td>
                <Td>
                  <Badge tone={e.format === 'page' ? 'neutral' : 'info'}>{formatLabel[e.format] ?? e.format}</Badge>
                </Td>
              </tr>
            ))}
          </Table>
          <CursorPager
            count={page.value.items.length}
            noun="entries"
            backHref={values.cursor ? withParams('/admin/access-log', values, { cursor: undefined }) : null}
            olderHref={
              page.value.nextCursor ? withParams('/admin/access-log', values, { cursor: page.value.nextCursor }) : null
            }
          />
        </>
      )}
    </>
  );
}
