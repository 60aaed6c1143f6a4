// Small factories for integration tests (never imported by the app).
import { randomBytes } from 'node:crypto';
import type { Role, Viewer } from '@/lib/auth/permissions';
import type { ApiScope } from '@/lib/credentials/scopes';
import type { Result } from '@/lib/result';
import { createApiKey } from '@/lib/server/credentials/credentials';
import { createUser } from '@/lib/server/users/users';
import { cli, type ApiKeyActor } from '@/lib/auth/actor';

export const uniq = (prefix = 't') => `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

export const TEST_PASSWORD = 'correct horse battery';

export async function makeUser(
  role: Role = 'reviewer',
  overrides: { email?: string; principalId?: string } = {},
): Promise<Viewer> {
  const email = overrides.email ?? `${uniq(role)}@example.test`;
  const result = await createUser(cli, { email, role, password: TEST_PASSWORD, principalId: overrides.principalId });
  if (!result.ok) throw new Error(`makeUser: ${result.failure}`);
  const { disabledAt: _d, createdAt: _c, ...viewer } = result.value;
  return viewer;
}

/** A real API key with these scopes (and organization), as the actor its bearer becomes. */
export async function makeApiKey(scopes: ApiScope[], organization?: string): Promise<ApiKeyActor> {
  const created = await createApiKey(cli, { name: uniq('key'), scopes, organization });
  if (!created.ok) throw new Error(`makeApiKey: ${created.failure}`);
  const { id, name, organization: org } = created.value.key;
  return { kind: 'apiKey', keyId: id, name, scopes, organization: org };
}

/** The value of a result that must have succeeded; a failure fails the test with its detail. */
export function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.failure}: ${result.detail ?? ''} ${JSON.stringify(result.errors ?? [])}`);
  return result.value;
}
