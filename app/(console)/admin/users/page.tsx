import { CreateUserForm } from '@/components/admin/create-user-form';
import { UserRowActions } from '@/components/admin/user-row-actions';
import { Badge, Card, PageHeader } from '@/components/ui/card';
import { Table, Td } from '@/components/ui/table';
import { roleLabel } from '@/lib/auth/permissions';
import { requireViewer } from '@/lib/server/http/session';
import { listUsers } from '@/lib/server/data/users';
import { formatDate } from '@/lib/format';

export const metadata = { title: 'Users' };

export default async function UsersPage() {
  const viewer = await requireViewer('users.manage');
  const users = await listUsers(viewer);
  if (!users.ok) throw new Error('listUsers refused an admin');
  return (
    <>
      <PageHeader
        title="Users"
        description="People who use the console, their role, and the principal id agents act for on their behalf."
      />
      <div className="space-y-6">
        <Table head={['Email', 'Role', 'Principal id', 'Created', 'Status', '']} caption="Users">
          {users.value.map((u) => (
            <tr key={u.userId} data-testid={`user-row-${u.email}`}>
              <Td>
                <span className="font-medium text-slate-900">{u.email}</span>
                <span className="block text-xs text-slate-500">{u.name}</span>
              </Td>
              <Td>{roleLabel[u.role]}</Td>
              <Td className="font-mono text-xs">{u.principalId}</Td>
              <Td>{formatDate(u.createdAt)}</Td>
              <Td>{u.disabledAt ? <Badge tone="bad">Disabled</Badge> : <Badge tone="good">Active</Badge>}</Td>
              <Td>
                <UserRowActions
                  userId={u.userId}
                  email={u.email}
                  role={u.role}
                  disabled={!!u.disabledAt}
                  self={u.userId === viewer.userId}
                />
              </Td>
            </tr>
          ))}
        </Table>
        <Card
          title="Add a user"
          description="Reviewers decide approvals, support staff look up incidents, admins manage everything."
        >
          <CreateUserForm />
        </Card>
      </div>
    </>
  );
}
