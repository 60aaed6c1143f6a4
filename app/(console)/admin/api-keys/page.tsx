import { CreateApiKeyForm } from '@/components/admin/create-api-key-form';
import { ConfirmButton } from '@/components/ui/confirm-button';
import { Badge, Card, EmptyState, PageHeader } from '@/components/ui/card';
import { sortColumn, Table, Td, wideOnly } from '@/components/ui/table';
import { readSort, sortRows } from '@/lib/sort';
import { listApiKeys } from '@/lib/server/credentials/credentials';
import { requireViewer } from '@/lib/server/auth/session';
import { formatDate } from '@/lib/format';
import { revokeApiKeyAction } from './actions';

export const metadata = { title: 'API keys' };

const sortKeys = ['name', 'created', 'lastUsed'] as const;

export default async function ApiKeysPage({ searchParams }: { searchParams: Promise<{ sort?: string }> }) {
  const viewer = await requireViewer('apikeys.manage');
  const keys = await listApiKeys(viewer);
  if (!keys.ok) throw new Error('listApiKeys refused an admin');
  const sort = readSort((await searchParams).sort, sortKeys, null);
  const href = (s: string) => `/admin/api-keys?sort=${s}`;
  const rows = sortRows(keys.value, sort, {
    name: (k) => k.name,
    created: (k) => k.createdAt,
    lastUsed: (k) => k.lastUsedAt,
  });
  return (
    <>
      <PageHeader
        title="API keys"
        description="Credentials for agent runtimes, gateways and execution steps. Stored as hashes; each is shown once when created."
      />
      <div className="space-y-6">
        <Card title="Create an API key">
          <CreateApiKeyForm />
        </Card>
        {keys.value.length === 0 ? (
          <EmptyState title="No API keys yet">
            Create one above for each service that reports outcomes or stages approvals.
          </EmptyState>
        ) : (
          <Table
            head={[
              sortColumn('Name', 'name', sort, href),
              'Key',
              'Scopes',
              { label: 'Organization', wide: true },
              { ...sortColumn('Created', 'created', sort, href, 'desc'), wide: true },
              sortColumn('Last used', 'lastUsed', sort, href, 'desc'),
              { label: 'Actions', hidden: true },
            ]}
            caption="API keys"
          >
            {rows.map((k) => (
              <tr key={k.id} data-testid={`apikey-row-${k.name}`}>
                <Td className="max-w-48">
                  <span className="block truncate font-medium text-slate-900" title={k.name}>
                    {k.name}
                  </span>
                  <span className="block text-xs text-slate-500">by {k.createdBy}</span>
                </Td>
                <Td className="font-mono text-xs">{k.prefix}</Td>
                <Td className="whitespace-normal">
                  <div className="flex w-44 flex-wrap gap-1 max-md:w-auto">
                    {k.scopes.map((s) => (
                      <Badge key={s}>{s}</Badge>
                    ))}
                  </div>
                </Td>
                <Td className={wideOnly}>{k.organization ?? <span className="text-slate-500">any</span>}</Td>
                <Td className={wideOnly}>{formatDate(k.createdAt)}</Td>
                <Td>{k.lastUsedAt ? formatDate(k.lastUsedAt) : <span className="text-slate-500">never</span>}</Td>
                <Td className="text-right">
                  {k.revokedAt ? (
                    <Badge tone="bad">Revoked {formatDate(k.revokedAt)}</Badge>
                  ) : (
                    <ConfirmButton
                      label="Revoke"
                      confirm={`Revoke the key "${k.name}"? Anything using it stops working at once.`}
                      run={revokeApiKeyAction.bind(null, k.id)}
                    />
                  )}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </div>
    </>
  );
}
