import { ConfirmButton } from '@/components/ui/confirm-button';
import { CreateTokenForm } from '@/components/auth/create-token-form';
import { Badge, Card, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { roleLabel } from '@/lib/auth/permissions';
import { listPersonalTokens } from '@/lib/server/credentials/credentials';
import { getSession, requireViewer } from '@/lib/server/auth/session';
import { listOwnSessions } from '@/lib/server/users/sessions';
import { SessionsCard } from '@/components/auth/sessions-card';
import { formatDate } from '@/lib/format';
import { revokeTokenAction } from './actions';

export const metadata = { title: 'Account' };

export default async function AccountPage() {
  const viewer = await requireViewer('tokens.own');
  const tokens = await listPersonalTokens(viewer);
  const sessions = await listOwnSessions(viewer, (await getSession())?.sessionId ?? null);
  return (
    <>
      <PageHeader
        title="Account"
        description={
          <>
            {viewer.email} · {roleLabel[viewer.role]} · acting for principal{' '}
            <code className="font-mono text-xs">{viewer.principalId}</code>
          </>
        }
      />
      <div className="space-y-6">
        {sessions.ok ? <SessionsCard sessions={sessions.value} /> : null}
        <Card
          title="Personal tokens"
          description={
            <>
              For scripts and chat integrations:{' '}
              <code className="font-mono text-xs">Authorization: Bearer cs_pat_…</code> acts as you, with your role.
            </>
          }
        >
          <CreateTokenForm />
        </Card>
        {tokens.length ? (
          <Table
            head={['Name', 'Token', 'Created', 'Last used', { label: 'Actions', hidden: true }]}
            caption="Personal tokens"
          >
            {tokens.map((t) => (
              <tr key={t.id}>
                <Td className="font-medium text-slate-900">{t.name}</Td>
                <Td className="font-mono text-xs">{t.prefix}</Td>
                <Td>{formatDate(t.createdAt)}</Td>
                <Td>{t.lastUsedAt ? formatDate(t.lastUsedAt) : <span className="text-slate-500">never</span>}</Td>
                <Td className="text-right">
                  {t.revokedAt ? (
                    <Badge tone="bad">Revoked</Badge>
                  ) : (
                    <ConfirmButton
                      label="Revoke"
                      confirm={`Revoke the token "${t.name}"? Scripts using it stop working at once.`}
                      run={revokeTokenAction.bind(null, t.id)}
                    />
                  )}
                </Td>
              </tr>
            ))}
          </Table>
        ) : null}
      </div>
    </>
  );
}
