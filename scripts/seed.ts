// Demo data for the embedded default: people to sign in as. Runs once (only into an empty user table).
import type { Role } from '@/lib/auth/permissions';

export const demoUsers: { email: string; role: Role; name: string; principalId: string }[] = [
  { email: 'admin@countersign.local', role: 'admin', name: 'Ada Admin', principalId: 'user_admin' },
  { email: 'reviewer@countersign.local', role: 'reviewer', name: 'Rui Reviewer', principalId: 'user_reviewer' },
  { email: 'reviewer2@countersign.local', role: 'reviewer', name: 'Rita Reviewer', principalId: 'user_reviewer2' },
  { email: 'support@countersign.local', role: 'support', name: 'Sam Support', principalId: 'user_support' },
];
export const DEMO_PASSWORD = 'countersign-demo';

/** Seeds demo users when there are none; returns whether it did. Needs DATABASE_URL set. */
export async function seedDemo(): Promise<boolean> {
  const { db } = await import('@/lib/server/db');
  const { createUser } = await import('@/lib/server/users');
  if ((await db.user.count()) > 0) return false;
  for (const u of demoUsers) {
    const result = await createUser('cli', { ...u, password: DEMO_PASSWORD });
    // A concurrent first start may have seeded the same user: that is fine.
    if (!result.ok && result.failure !== 'conflict') throw new Error(`seeding ${u.email}: ${result.failure}`);
  }
  return true;
}

export function printDemoSignIn(): void {
  console.log('\n  Demo sign-in (password for all: ' + DEMO_PASSWORD + ')');
  for (const u of demoUsers) console.log(`    ${u.role.padEnd(9)} ${u.email}`);
  console.log('');
}
