import { CreateUserForm } from '@/components/admin/create-user-form';
import { UserRowActions } from '@/components/admin/user-row-actions';
import { Badge, Card, PageHeader } from '@/components/ui/card';
import { sortColumn, Table, Td } from '@/components/ui/table';
import { readSort, sortRows } from '@/lib/sort';
import { roleLabel } from '@/lib/auth/permissions';
import { requireViewer } from '@/lib/server/auth/session';
import { listUsers, type SignInMethods } from '@/lib/server/users/users';
import { formatDate } from '@/lib/format';

export const metadata = { title: 'Users' };

const signInLabel = (m: SignInMethods) =>
  m.sso && m.password ? 'Single sign-on and password' : m.sso ? 'Single sign-on' : m.password ? 'Password' : 'None';

const sortKeys = ['email', 'role', 'lastSignIn'] as const;

export default async function UsersPage({ searchParams }: { searchParams: Promise<{ sort?: string }> }) {
  const viewer = await requireViewer('users.manage');
  const users = await listUsers(viewer);
  if (!users.ok) throw new Error('listUsers refused an admin');
  const sort = readSort((await searchParams).sort, sortKeys, null);
  const href = (s: string) => `/admin/users?sort=${s}`;
  const rows = sortRows(users.value, sort, {
    email: (u) => u.email,
    role: (u) => roleLabel[u.role],
    lastSignIn: (u) => u.lastSignInAt,
  });
  return (
    <>
      <PageHeader
        title="Users"
        description="People who use the console, their role, and the principal id agents act for on their behalf."
      />
      <div className="space-y-6">
        <Table
          head={[
            sortColumn('Email', 'email', sort, href),
            sortColumn('Role', 'role', sort, href),
            'Signs in with',
            sortColumn('Last sign-in', 'lastSignIn', sort, href, 'desc'),
            'Principal id',
            'Status',
            { label: 'Actions', hidden: true },
          ]}
          caption="Users"
        >
          {rows.map((u) => (
            <tr key={u.userId} data-testid={`user-row-${u.email}`}>
              {/* A long address or list of claims wraps, so the row's actions stay on screen. */}
              <Td className="max-w-72 whitespace-normal">
                <span className="font-medium break-all text-slate-900">{u.email}</span>
                <span className="block text-xs text-slate-500">{u.name}</span>
              </Td>
              <Td className="max-w-48 whitespace-normal">
                {roleLabel[u.role]}
                {u.signIn.sso && u.roleClaims.length ? (
                  <span className="block text-xs break-all text-slate-500" data-testid="role-claims">
                    from {u.roleClaims.join(', ')}
                  </span>
                ) : null}
              </Td>
              <Td>
                <span data-testid="sign-in-method">{signInLabel(u.signIn)}</span>
              </Td>
              <Td>{u.lastSignInAt ? formatDate(u.lastSignInAt) : <span className="text-slate-500">never</span>}</Td>
              <Td className="max-w-32 font-mono text-xs">
                <span className="block truncate" title={u.principalId}>
                  {u.principalId}
                </span>
              </Td>
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
