import { ConfirmButton } from '@/components/ui/confirm-button';
import { Badge, Card } from '@/components/ui/card';
import { Button } from '@/components/ui/button';
import { Table, Td } from '@/components/ui/table';
import { formatDate } from '@/lib/format';
import type { SessionView } from '@/lib/server/users/sessions';
import { endSessionAction, signOutEverywhereAction } from '@/app/(console)/account/session-actions';

const methodLabel: Record<string, string> = { oidc: 'Single sign-on', password: 'Password' };

/** Account: where one is signed in, and the way to end it. */
export function SessionsCard({ sessions }: { sessions: SessionView[] }) {
  return (
    <Card
      title="Signed-in sessions"
      description="Every browser signed in as you. Ending a session signs that browser out at its next request."
    >
      <Table
        head={['Device', 'Address', 'Signed in with', 'Signed in', 'Last seen', { label: 'Actions', hidden: true }]}
        caption="Signed-in sessions"
      >
        {sessions.map((s) => (
          <tr key={s.id} data-testid="session-row">
            <Td className="font-medium text-slate-900">
              {s.device} {s.current ? <Badge tone="good">This browser</Badge> : null}
            </Td>
            <Td className="font-mono text-xs">{s.address}</Td>
            <Td>{methodLabel[s.method] ?? s.method}</Td>
            <Td>{formatDate(s.createdAt)}</Td>
            <Td>{formatDate(s.lastSeenAt)}</Td>
            <Td className="text-right">
              {s.current ? null : (
                <ConfirmButton
                  label="End"
                  confirm={`Sign out ${s.device} (${s.address})?`}
                  run={endSessionAction.bind(null, s.id)}
                />
              )}
            </Td>
          </tr>
        ))}
      </Table>
      <form action={signOutEverywhereAction} className="mt-4">
        <Button type="submit" variant="danger">
          Sign out everywhere
        </Button>
      </form>
    </Card>
  );
}
