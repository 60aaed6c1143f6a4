import Link from 'next/link';
import { firstValues, withParams } from '@/lib/url';
import { RevokeForm } from '@/components/approvals/revoke-form';
import { Button } from '@/components/ui/button';
import { Badge, EmptyState, Notice, PageHeader } from '@/components/ui/card';
import { Input, Select } from '@/components/ui/field';
import { Table, Td } from '@/components/ui/table';
import { settledAt, statusLabel, statusTone } from '@/lib/approvals/present';
import { approvalListQuerySchema, approvalStatuses } from '@/lib/approvals/schemas';
import { formatDate } from '@/lib/format';
import { fieldErrors } from '@/lib/result';
import { listApprovals } from '@/lib/server/approvals';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'Authorizations' };

type Search = Record<string, string | string[] | undefined>;

export default async function AuthorizationsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const viewer = await requireViewer('approval.revoke');
  const values = firstValues(await searchParams);
  const history = values.view === 'history';
  const { view: _view, ...filters } = values;
  const parsed = approvalListQuerySchema.safeParse(
    history ? { ...filters, status: filters.status || undefined } : { status: 'live', cursor: filters.cursor },
  );
  const page = parsed.success
    ? await listApprovals(viewer, history && !parsed.data.status ? { ...parsed.data } : parsed.data)
    : null;

  return (
    <>
      <PageHeader
        title="Authorizations"
        description="Pending requests and live grants, which you can revoke at once; and the history of decided, expired, revoked and redeemed ones."
      />
      <nav aria-label="Views" className="mb-4 flex gap-2">
        {[
          ['Live', {}],
          ['History', { view: 'history' }],
        ].map(([label, params]) => {
          const active = (label === 'History') === history;
          return (
            <Link
              key={label as string}
              href={withParams('/admin/authorizations', params as Record<string, string>)}
              aria-current={active ? 'page' : undefined}
              className={`rounded-full px-3 py-1 text-sm font-medium ring-1 ring-inset ${active ? 'bg-indigo-600 text-white ring-indigo-600' : 'bg-white text-slate-700 ring-slate-300 hover:bg-slate-50'}`}
            >
              {label as string}
            </Link>
          );
        })}
      </nav>
      {history ? (
        <form
          method="get"
          action="/admin/authorizations"
          className="mb-4 flex flex-wrap items-end gap-3 rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200"
          aria-label="Filter history"
        >
          <input type="hidden" name="view" value="history" />
          <label className="text-xs font-medium text-slate-600">
            Status
            <Select name="status" defaultValue={values.status ?? ''} className="mt-1 w-36 py-1.5">
              <option value="">Any</option>
              {approvalStatuses.map((s) => (
                <option key={s} value={s}>
                  {statusLabel[s]}
                </option>
              ))}
            </Select>
          </label>
          {(['server', 'tool', 'principal'] as const).map((f) => (
            <label key={f} className="text-xs font-medium capitalize text-slate-600">
              {f}
              <Input name={f} defaultValue={values[f] ?? ''} className="mt-1 w-40 py-1.5" />
            </label>
          ))}
          <Button type="submit" size="sm">
            Apply
          </Button>
          <Link href="/admin/authorizations?view=history" className="text-sm text-slate-600 hover:text-slate-900">
            Clear
          </Link>
        </form>
      ) : null}

      {!parsed.success ? (
        <Notice tone="bad">
          These filters cannot be applied:{' '}
          {fieldErrors(parsed.error.issues)
            .map((e) => `${e.path} ${e.message}`)
            .join('; ')}
          .
        </Notice>
      ) : !page?.ok ? (
        <Notice tone="bad">Your role cannot list authorizations.</Notice>
      ) : page.value.items.length === 0 ? (
        <EmptyState title={history ? 'No authorizations match' : 'Nothing is live'}>
          {history ? 'Try fewer filters.' : 'No request is pending and no grant is waiting to be used.'}
        </EmptyState>
      ) : (
        <>
          <Table
            head={[
              'Status',
              'Tool',
              'Summary',
              'On behalf of',
              history ? 'Decided' : 'Expires',
              { label: 'Revoke', hidden: true },
            ]}
            caption="Authorizations"
          >
            {page.value.items.map((a) => (
              <tr key={a.id} data-testid="authorization-row">
                <Td>
                  <Badge tone={statusTone[a.status]}>{statusLabel[a.status]}</Badge>
                  {a.grant ? <span className="ml-1.5 text-xs text-slate-500">grant {a.grant.state}</span> : null}
                </Td>
                <Td>
                  <Link
                    href={`/approvals/${a.id}`}
                    title={a.tool.name}
                    className="block max-w-40 truncate font-mono text-xs font-medium text-indigo-700 hover:underline max-md:max-w-none 2xl:max-w-48"
                  >
                    {a.tool.name}
                  </Link>
                  <span className="block max-w-48 truncate text-xs text-slate-500 max-md:max-w-none" title={a.server}>
                    {a.server}
                  </span>
                </Td>
                {/* The summary gives way (truncated, whole on hover) so the row's Revoke stays in view. */}
                <Td className="w-full max-w-0 min-w-24">
                  <span className="block truncate text-sm" title={a.summary}>
                    {a.summary}
                  </span>
                </Td>
                <Td>
                  <span className="block max-w-40 truncate max-md:max-w-none" title={a.principal}>
                    {a.principal}
                  </span>
                  <span className="block max-w-40 truncate text-xs text-slate-500 max-md:max-w-none">
                    {a.organization}
                  </span>
                </Td>
                <Td className="text-xs tabular-nums">
                  {history
                    ? formatDate(settledAt(a))
                    : formatDate(a.grant?.state === 'active' ? a.grant.expiresAt : a.expiresAt)}
                </Td>
                <Td className="text-right">
                  {!history ? <RevokeForm id={a.id} what={`${a.tool.name} for ${a.principal}`} compact /> : null}
                </Td>
              </tr>
            ))}
          </Table>
          {page.value.nextCursor ? (
            <div className="mt-4 text-right text-sm">
              <Link
                className="font-medium text-indigo-600"
                href={withParams('/admin/authorizations', values, { cursor: page.value.nextCursor })}
              >
                Older →
              </Link>
            </div>
          ) : null}
        </>
      )}
    </>
  );
}
