// Small factories for integration tests (never imported by the app).
import { randomBytes } from 'node:crypto';
import type { Role, Viewer } from '@/lib/auth/permissions';
import { createUser } from '@/lib/server/data/users';
import { cli } from '@/lib/auth/actor';

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
