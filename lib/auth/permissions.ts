// The one permission policy: which actor may do which action, from one table. Pages use it for
// comfort; data access uses it for real.
import type { ApiKeyActor, Person, SystemActor, Actor } from './actor';
import { apiScopes, type ApiScope } from '@/lib/credentials/scopes';

export const roles = ['reviewer', 'support', 'admin'] as const;
export type Role = (typeof roles)[number];

export type Viewer = { userId: string; email: string; name: string; role: Role; principalId: string };

export const actions = [
  'console.view',
  'identity.read',
  'outcomes.read',
  'outcomes.write',
  'outcomes.state_check',
  'outcomes.reclassify',
  'incidents.read',
  'incidents.export',
  'approvals.read',
  // The arguments of a request (docs/design.md "What a reviewer sees: what will run"): those who decide.
  'approvals.readArguments',
  'approvals.request',
  'policy.evaluate',
  'approval.decide',
  'approval.revoke',
  'grants.redeem',
  'users.create',
  'users.manage',
  'apikeys.manage',
  'servers.manage',
  'policy.manage',
  'webhooks.manage',
  'audit.read',
  'tokens.own',
  'tokens.issue',
  'sessions.own',
  'sessions.manage',
  'users.provision',
] as const;
export type Action = (typeof actions)[number];

const everyone = [
  'console.view',
  'identity.read',
  'outcomes.read',
  // docs/design.md "Resolving an unknown": support, reviewer or admin.
  'outcomes.state_check',
  'incidents.read',
  'incidents.export',
  'approvals.read',
  'policy.evaluate',
  'tokens.own',
  'sessions.own',
] as const satisfies readonly Action[];

// People by role (dub's role→scope table), API keys by scope, the system by name: one table.
const roleGrants = {
  support: everyone,
  reviewer: [...everyone, 'approval.decide', 'approvals.readArguments'],
  admin: [
    ...everyone,
    'approval.decide',
    'approvals.readArguments',
    'approval.revoke',
    'users.create',
    'users.manage',
    'apikeys.manage',
    'servers.manage',
    'policy.manage',
    'webhooks.manage',
    'audit.read',
    'sessions.manage',
  ],
} as const satisfies Record<Role, readonly Action[]>;

const scopeGrants = {
  'outcomes:write': ['identity.read', 'outcomes.write', 'outcomes.state_check'],
  'outcomes:read': ['identity.read', 'outcomes.read', 'incidents.read', 'incidents.export'],
  'approvals:request': ['identity.read', 'approvals.read', 'approvals.request', 'policy.evaluate'],
  'grants:redeem': ['identity.read', 'approvals.read', 'grants.redeem'],
} as const satisfies Record<ApiScope, readonly Action[]>;

// What the command line does: bootstrap and verify. (The schedule's expiry and purge run as jobs, unchecked.)
const systemGrants = [
  'audit.read',
  'users.create',
  'tokens.issue',
  'apikeys.manage',
  'servers.manage',
  'policy.manage',
  // A sign-in through the identity provider creates or refreshes the person (lib/server/users/users-sso.ts).
  'users.provision',
  // `outcomes:reclassify`, and the first start after an upgrade.
  'outcomes.reclassify',
] as const satisfies readonly Action[];

type RoleAction = (typeof roleGrants)[Role][number];
type ScopeAction = (typeof scopeGrants)[ApiScope][number];
type SystemAction = (typeof systemGrants)[number];

/** The kinds of actor the table grants an action to at all (so a `true` also tells what the actor is). */
export type Grantee<A extends Action> =
  | (A extends RoleAction ? Person : never)
  | (A extends ScopeAction ? ApiKeyActor : never)
  | (A extends SystemAction ? SystemActor : never);

const byRole = new Map<string, ReadonlySet<Action>>(roles.map((r) => [r, new Set(roleGrants[r])]));
const byScope = new Map<string, ReadonlySet<Action>>(apiScopes.map((s) => [s, new Set(scopeGrants[s])]));
const bySystem: ReadonlySet<Action> = new Set(systemGrants);

/** The one check: may this actor do this action? Nobody (null) may do nothing. */
export function authorize<A extends Action>(actor: Actor | null | undefined, action: A): actor is Grantee<A> {
  if (!actor) return false;
  switch (actor.kind) {
    case 'apiKey':
      return actor.scopes.some((s) => byScope.get(s)?.has(action) ?? false);
    case 'system':
      return bySystem.has(action);
    default:
      return byRole.get(actor.role)?.has(action) ?? false;
  }
}

/** The scopes that grant an action, in their listed order (none: people only). */
export const scopesGranting = (action: Action): ApiScope[] => apiScopes.filter((s) => byScope.get(s)?.has(action));

export const roleLabel: Record<Role, string> = { reviewer: 'Reviewer', support: 'Support', admin: 'Admin' };
