// Who may call an operation, from the one permission table (lib/auth/permissions.ts): the API key
// scopes that grant its action, and the roles a person needs (through a personal token or the
// console session). Pure.
import { authorize, roles, scopesGranting, type Action, type Role } from '@/lib/auth/permissions';

export const securitySchemes = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'cs_live_…',
    description: 'A machine’s API key, `Authorization: Bearer cs_live_…`; its scopes say what it may do.',
  },
  personalToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'cs_pat_…',
    description: 'A person’s token, `Authorization: Bearer cs_pat_…`, acting with that person’s role.',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'authjs.session-token',
    description:
      'The console’s own session (`__Secure-authjs.session-token` over https). State-changing requests must carry a same-origin `Origin`, else 403.',
  },
} as const;

const person = (role: Role) => ({ userId: '', email: '', name: '', principalId: '', role });

export const rolesGranting = (action: Action): Role[] => roles.filter((r) => authorize(person(r), action));

/** OpenAPI security requirements: any one of them suffices (scope or role names listed per requirement). */
export function securityOf(action: Action | null): Record<string, string[]>[] {
  if (action === null) return [];
  const requirement = (scheme: keyof typeof securitySchemes, name: string) => ({ [scheme]: [name] });
  return [
    ...scopesGranting(action).map((s) => requirement('apiKey', s)),
    ...rolesGranting(action).flatMap((r) => [requirement('personalToken', r), requirement('session', r)]),
  ];
}

export function whoMay(action: Action | null): string {
  if (action === null) return 'No credential needed.';
  const scopes = scopesGranting(action);
  const people = rolesGranting(action);
  return (
    [
      scopes.length ? `API keys with scope ${scopes.map((s) => `\`${s}\``).join(' or ')}` : 'Not for API keys',
      people.length ? `people with role ${people.join(', ')}` : 'not for people',
    ].join('; ') + '.'
  );
}
