import { describe, expect, it } from 'vitest';
import {
  endOwnSession,
  endOwnSessions,
  endUserSessions,
  findSessionViewer,
  listOwnSessions,
  listUserSessions,
  openSession,
} from './sessions';
import { changeUserRole, setUserDisabled, verifyPassword } from './users';
import { signInWithSso } from './users-sso';
import { makeUser, uniq, value } from '../../../testing/factories';
import { db } from '../db/db';
import { cli, scheduler } from '@/lib/auth/actor';

const open = (userId: string) => openSession(userId, 'password', 'Chrome on Linux', '127.0.0.1');

describe('sessions (real PostgreSQL)', () => {
  it('a live session gives the person; a wrong id, user or version does not', async () => {
    const u = await makeUser('reviewer');
    const other = await makeUser('support');
    const s = await open(u.userId);
    expect((await findSessionViewer(u.userId, s.id, s.version))?.email).toBe(u.email);
    expect(await findSessionViewer(other.userId, s.id, s.version)).toBeNull();
    expect(await findSessionViewer(u.userId, s.id, s.version + 1)).toBeNull();
    expect(await findSessionViewer(u.userId, '00000000-0000-4000-8000-000000000000', s.version)).toBeNull();
  });

  it('sign out everywhere ends every session of one’s own, and is audited', async () => {
    const u = await makeUser('support');
    const other = await makeUser('support');
    const [a, b, c] = [await open(u.userId), await open(u.userId), await open(other.userId)];
    expect(value(await listOwnSessions(u, a.id)).map((s) => s.current)).toContain(true);
    expect(value(await endOwnSessions(u))).toEqual({ ended: 2 });
    expect(await findSessionViewer(u.userId, a.id, a.version)).toBeNull();
    expect(await findSessionViewer(u.userId, b.id, b.version)).toBeNull();
    expect(await findSessionViewer(other.userId, c.id, c.version)).not.toBeNull();
    // A session opened afterwards works (the new version).
    const d = await open(u.userId);
    expect(await findSessionViewer(u.userId, d.id, d.version)).not.toBeNull();
    const audit = await db.auditEntry.findMany({ where: { targetId: u.userId, action: 'session.end_all' } });
    expect(audit).toHaveLength(1);
  });

  it('one can end one’s own other session but not someone else’s', async () => {
    const u = await makeUser('support');
    const other = await makeUser('support');
    const mine = await open(u.userId);
    const theirs = await open(other.userId);
    expect(await endOwnSession(u, theirs.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(await findSessionViewer(other.userId, theirs.id, theirs.version)).not.toBeNull();
    expect(value(await endOwnSession(u, mine.id))).toEqual({ ended: 1 });
    expect(await endOwnSession(u, mine.id)).toMatchObject({ ok: false, failure: 'not_found' });
  });

  it('only an admin lists or ends another person’s sessions', async () => {
    const admin = await makeUser('admin');
    const reviewer = await makeUser('reviewer');
    const s = await open(reviewer.userId);
    expect(await listUserSessions(reviewer, admin.userId)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await endUserSessions(reviewer, admin.userId)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await endUserSessions(cli, reviewer.userId)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(value(await listUserSessions(admin, reviewer.userId))).toHaveLength(1);
    expect(value(await endUserSessions(admin, reviewer.userId))).toEqual({ ended: 1 });
    expect(await findSessionViewer(reviewer.userId, s.id, s.version)).toBeNull();
  });

  it('a role change or a disable ends the sessions at once; a no-op role change does not', async () => {
    const admin = await makeUser('admin');
    const u = await makeUser('reviewer');
    const s1 = await open(u.userId);
    value(await changeUserRole(admin, u.userId, 'reviewer'));
    expect(await findSessionViewer(u.userId, s1.id, s1.version)).not.toBeNull();
    value(await changeUserRole(admin, u.userId, 'support'));
    expect(await findSessionViewer(u.userId, s1.id, s1.version)).toBeNull();
    const s2 = await open(u.userId);
    value(await setUserDisabled(admin, u.userId, true));
    expect(await findSessionViewer(u.userId, s2.id, s2.version)).toBeNull();
  });
});

describe('SSO sign-in provisioning (real PostgreSQL)', () => {
  const who = (email: string, role: 'admin' | 'reviewer' | 'support' = 'reviewer') => ({
    subject: `https://idp.example ${email}`,
    email,
    name: 'Ada',
    principal: email,
    role,
    roleClaims: [`g-${role}`],
  });

  it('ten first sign-ins at once create one person', async () => {
    const email = `${uniq('sso')}@example.test`;
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => signInWithSso(scheduler, who(email))));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(new Set(outcomes.map((o) => (o.ok ? o.userId : null))).size).toBe(1);
    expect(await db.user.count({ where: { email } })).toBe(1);
    expect(
      await db.auditEntry.count({ where: { action: 'user.sso_create', data: { path: ['email'], equals: email } } }),
    ).toBe(1);
  });

  it('refuses a disabled person and an e-mail linked to another identity; changes nothing', async () => {
    const email = `${uniq('sso')}@example.test`;
    const first = await signInWithSso(scheduler, who(email));
    if (!first.ok) throw new Error('first sign-in refused');
    expect(await signInWithSso(scheduler, { ...who(email), subject: 'https://idp.example other' })).toEqual({
      ok: false,
      reason: 'conflict',
    });
    await db.user.update({ where: { id: first.userId }, data: { disabledAt: new Date() } });
    expect(await signInWithSso(scheduler, who(email, 'admin'))).toEqual({ ok: false, reason: 'disabled' });
    expect((await db.user.findUniqueOrThrow({ where: { id: first.userId } })).role).toBe('reviewer');
  });

  it('a person created by SSO has no password: not even the dummy hash’s own text signs them in', async () => {
    const email = `${uniq('sso')}@example.test`;
    expect((await signInWithSso(scheduler, who(email))).ok).toBe(true);
    expect(await verifyPassword(email, 'countersign-dummy-password')).toBeNull();
    expect(await verifyPassword(email, '')).toBeNull();
  });

  it('only the system may provision', async () => {
    const admin = await makeUser('admin');
    // @ts-expect-error a person is not the sign-in path
    await expect(signInWithSso(admin, who(`${uniq('sso')}@example.test`))).rejects.toThrow();
  });
});
