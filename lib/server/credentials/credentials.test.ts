import { describe, expect, it } from 'vitest';
import {
  authenticateBearer,
  createApiKey,
  createPersonalToken,
  listApiKeys,
  revokeApiKey,
  revokePersonalToken,
} from './credentials';
import { setUserDisabled } from '../users/users';
import { makeUser, uniq } from '../../../testing/factories';
import { db } from '../db/db';

describe('API keys and personal tokens (real PostgreSQL)', () => {
  it('creates a key shown once, stored only as a hash, that authenticates with its scopes', async () => {
    const admin = await makeUser('admin');
    const created = await createApiKey(admin, { name: uniq('key'), scopes: ['outcomes:write'], organization: 'acme' });
    if (!created.ok) throw new Error(created.failure);
    const { secret, key } = created.value;
    expect(secret).toMatch(/^cs_live_[A-Za-z0-9_-]{43}$/);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(JSON.stringify(row)).not.toContain(secret.slice(8));
    expect(await authenticateBearer(secret)).toMatchObject({
      kind: 'apiKey',
      keyId: key.id,
      scopes: ['outcomes:write'],
      organization: 'acme',
    });
    const listed = await listApiKeys(admin);
    expect(listed.ok && JSON.stringify(listed.value)).not.toContain(secret.slice(8));
  });

  it('a revoked key stops working at once; revoking twice is a conflict', async () => {
    const admin = await makeUser('admin');
    const created = await createApiKey(admin, { name: uniq('key'), scopes: ['outcomes:read'] });
    if (!created.ok) throw new Error(created.failure);
    expect(await revokeApiKey(admin, created.value.key.id)).toMatchObject({ ok: true });
    expect(await authenticateBearer(created.value.secret)).toBeNull();
    expect(await revokeApiKey(admin, created.value.key.id)).toMatchObject({ ok: false, failure: 'conflict' });
  });

  it('notes when a key was last used, at most once a minute', async () => {
    const admin = await makeUser('admin');
    const created = await createApiKey(admin, { name: uniq('key'), scopes: ['outcomes:read'] });
    if (!created.ok) throw new Error(created.failure);
    const { secret, key } = created.value;
    const lastUsed = async () =>
      (await db.apiKey.findUniqueOrThrow({ where: { id: key.id }, select: { lastUsedAt: true } })).lastUsedAt;
    expect(await lastUsed()).toBeNull();
    await authenticateBearer(secret);
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);

    const recent = new Date(Date.now() - 30_000);
    await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: recent } });
    await authenticateBearer(secret);
    expect(await lastUsed()).toEqual(recent);

    const old = new Date(Date.now() - 120_000);
    await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: old } });
    await authenticateBearer(secret);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(Date.now() - 10_000);
  });

  it('only admins manage keys', async () => {
    const support = await makeUser('support');
    expect(await createApiKey(support, { name: 'x', scopes: ['outcomes:write'] })).toMatchObject({
      ok: false,
      failure: 'forbidden',
    });
    expect(await listApiKeys(support)).toMatchObject({ ok: false, failure: 'forbidden' });
  });

  it('rejects unknown, malformed and look-alike secrets', async () => {
    for (const s of ['', 'cs_live_', 'cs_live_' + 'A'.repeat(43), 'cs_pat_nope', 'Bearer x', 'x'.repeat(5000)]) {
      expect(await authenticateBearer(s)).toBeNull();
    }
  });

  it('a personal token acts as its user until revoked or the user is disabled', async () => {
    const admin = await makeUser('admin');
    const user = await makeUser('reviewer');
    const t = await createPersonalToken(user, user.userId, 'script');
    if (!t.ok) throw new Error(t.failure);
    expect(await authenticateBearer(t.value.secret)).toMatchObject({
      kind: 'user',
      userId: user.userId,
      role: 'reviewer',
    });
    await setUserDisabled(admin, user.userId, true);
    expect(await authenticateBearer(t.value.secret)).toBeNull();
    await setUserDisabled(admin, user.userId, false);
    expect(await revokePersonalToken(admin, t.value.token.id)).toMatchObject({ ok: false, failure: 'not_found' });
    expect(await revokePersonalToken(user, t.value.token.id)).toMatchObject({ ok: true });
    expect(await authenticateBearer(t.value.secret)).toBeNull();
  });

  it('nobody creates a token for someone else', async () => {
    const a = await makeUser('admin');
    const b = await makeUser('reviewer');
    expect(await createPersonalToken(a, b.userId, 'x')).toMatchObject({ ok: false, failure: 'forbidden' });
  });

  it('concurrent revocations of one key: exactly one succeeds', async () => {
    const admin = await makeUser('admin');
    const created = await createApiKey(admin, { name: uniq('key'), scopes: ['outcomes:read'] });
    if (!created.ok) throw new Error(created.failure);
    const results = await Promise.all(Array.from({ length: 8 }, () => revokeApiKey(admin, created.value.key.id)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(await db.auditEntry.count({ where: { targetId: created.value.key.id, action: 'apikey.revoke' } })).toBe(1);
  });
});
