// The one permission policy. Pages use it for comfort; data access uses it for real.

export const roles = ['reviewer', 'support', 'admin'] as const;
export type Role = (typeof roles)[number];

export type Viewer = { userId: string; email: string; name: string; role: Role; principalId: string };

export const actions = [
  'console.view',
  'outcomes.read',
  'incidents.read',
  'incidents.export',
  'approvals.read',
  'approval.decide',
  'approval.revoke',
  'users.manage',
  'apikeys.manage',
  'servers.manage',
  'policy.manage',
  'audit.read',
  'tokens.own',
] as const;
export type Action = (typeof actions)[number];

const everyone: Action[] = [
  'console.view',
  'outcomes.read',
  'incidents.read',
  'incidents.export',
  'approvals.read',
  'tokens.own',
];

const grants: Record<Role, ReadonlySet<Action>> = {
  support: new Set(everyone),
  reviewer: new Set([...everyone, 'approval.decide']),
  admin: new Set([
    ...everyone,
    'approval.decide',
    'approval.revoke',
    'users.manage',
    'apikeys.manage',
    'servers.manage',
    'policy.manage',
    'audit.read',
  ]),
};

export function can(viewer: Pick<Viewer, 'role'> | null | undefined, action: Action): boolean {
  return viewer ? grants[viewer.role].has(action) : false;
}

export const roleLabel: Record<Role, string> = { reviewer: 'Reviewer', support: 'Support', admin: 'Admin' };
