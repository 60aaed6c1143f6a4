import { describe, expect, it } from 'vitest';
import { changeUserRole, createUser, findActiveViewer, listUsers, setUserDisabled, verifyPassword } from './users';
import { makeUser, TEST_PASSWORD, uniq } from '../../../testing/factories';
import { db } from '../db/db';
import { cli } from '@/lib/auth/actor';

describe('users (real PostgreSQL)', () => {
  it('creates a user whose password verifies, with the email as default principal', async () => {
    const email = `${uniq('u')}@example.test`;
    const created = await createUser(cli, { email, role: 'support', password: TEST_PASSWORD });
    expect(created.ok).toBe(true);
    if (!created.ok) return;
    expect(created.value.principalId).toBe(email);
    expect((await verifyPassword(email, TEST_PASSWORD))?.userId).toBe(created.value.userId);
    expect(await verifyPassword(email, TEST_PASSWORD + 'x')).toBeNull();
    expect(await verifyPassword(`nobody-${email}`, TEST_PASSWORD)).toBeNull();
  });

  it('never stores the password in clear', async () => {
    const u = await makeUser('reviewer');
    const row = await db.user.findUniqueOrThrow({ where: { id: u.userId } });
    expect(row.passwordHash).not.toContain(TEST_PASSWORD);
    expect(row.passwordHash).toMatch(/^\$2[aby]\$/);
  });

  it('refuses a duplicate email, also when ten arrive at once', async () => {
    const email = `${uniq('dup')}@example.test`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => createUser(cli, { email, role: 'reviewer', password: TEST_PASSWORD })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const failures = results.filter((r) => !r.ok);
    expect(failures).toHaveLength(9);
    for (const f of failures) expect(f).toMatchObject({ failure: 'conflict', errors: [{ path: 'email' }] });
    expect(await db.user.count({ where: { email } })).toBe(1);
  });

  it('lets only admins list and change users, and never themselves', async () => {
    const admin = await makeUser('admin');
    const reviewer = await makeUser('reviewer');
    expect(await listUsers(reviewer)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await changeUserRole(reviewer, admin.userId, 'support')).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await changeUserRole(admin, admin.userId, 'support')).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await setUserDisabled(admin, admin.userId, true)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await changeUserRole(admin, reviewer.userId, 'support')).toMatchObject({
      ok: true,
      value: { role: 'support' },
    });
  });

  it('a disabled user can no longer sign in or act, and comes back when enabled', async () => {
    const admin = await makeUser('admin');
    const u = await makeUser('reviewer');
    expect(await setUserDisabled(admin, u.userId, true)).toMatchObject({ ok: true });
    expect(await findActiveViewer(u.userId)).toBeNull();
    expect(await verifyPassword(u.email, TEST_PASSWORD)).toBeNull();
    expect(await setUserDisabled(admin, u.userId, false)).toMatchObject({ ok: true });
    expect((await findActiveViewer(u.userId))?.email).toBe(u.email);
  });

  it('audits every change to a user', async () => {
    const admin = await makeUser('admin');
    const u = await makeUser('reviewer');
    await changeUserRole(admin, u.userId, 'admin');
    await setUserDisabled(admin, u.userId, true);
    const actions = (await db.auditEntry.findMany({ where: { targetId: u.userId }, orderBy: { seq: 'asc' } })).map(
      (e) => e.action,
    );
    expect(actions).toEqual(['user.create', 'user.role_change', 'user.disable']);
  });
});
