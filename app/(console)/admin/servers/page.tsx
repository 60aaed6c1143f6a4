import { ConfirmButton } from '@/components/ui/confirm-button';
import { TrustServerForm } from '@/components/admin/trust-server-form';
import { Card, EmptyState, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { listTrustedServers } from '@/lib/server/policy/trusted-servers';
import { requireViewer } from '@/lib/server/auth/session';
import { formatDate } from '@/lib/format';
import { untrustServerAction } from './actions';

export const metadata = { title: 'Trusted servers' };

export default async function ServersPage() {
  const viewer = await requireViewer('servers.manage');
  const servers = await listTrustedServers(viewer);
  if (!servers.ok) throw new Error('listTrustedServers refused an admin');
  return (
    <>
      <PageHeader
        title="Trusted servers"
        description="Tool annotations (readOnlyHint, destructiveHint…) count only from servers trusted here. Any other server's tools are treated as MCP's defaults: writes that are destructive and open-world."
      />
      <div className="space-y-6">
        <Card title="Trust a server">
          <TrustServerForm />
        </Card>
        {servers.value.length === 0 ? (
          <EmptyState title="No trusted servers">
            Until you trust one, every tool is treated as a write that needs approval.
          </EmptyState>
        ) : (
          <Table head={['Server', 'Trusted by', 'Since', { label: 'Actions', hidden: true }]} caption="Trusted servers">
            {servers.value.map((s) => (
              <tr key={s.name} data-testid={`server-row-${s.name}`}>
                <Td className="font-mono text-xs text-slate-900">{s.name}</Td>
                <Td>{s.trustedBy}</Td>
                <Td>{formatDate(s.trustedAt)}</Td>
                <Td className="text-right">
                  <ConfirmButton
                    label="Stop trusting"
                    confirm={`Stop trusting ${s.name}? Its tools' annotations will be ignored from now on.`}
                    run={untrustServerAction.bind(null, s.name)}
                  />
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </div>
    </>
  );
}
