import { beforeAll, describe, expect, it } from 'vitest';
import { listIncidentAccess, logIncidentAccess } from './access-log';
import { createApiKey } from '../credentials/credentials';
import { makeUser, uniq, value } from '../../../testing/factories';
import { db, logPool, pool } from '../db/db';
import type { Viewer } from '@/lib/auth/permissions';
import { accessLogQuerySchema } from '@/lib/incidents/access-log';
import { cli, type Actor } from '@/lib/auth/actor';

let admin: Viewer;
let support: Viewer;
let reviewer: Viewer;
let key: Extract<Actor, { kind: 'apiKey' }>;

beforeAll(async () => {
  admin = await makeUser('admin');
  support = await makeUser('support');
  reviewer = await makeUser('reviewer');
  const created = await createApiKey(cli, { name: uniq('reader'), scopes: ['outcomes:read'] });
  if (!created.ok) throw new Error(created.failure);
  key = {
    kind: 'apiKey',
    keyId: created.value.key.id,
    name: created.value.key.name,
    scopes: ['outcomes:read'],
    organization: null,
  };
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('logIncidentAccess', () => {
  it('is written without waiting for the disk, and only it: everything else commits durably', async () => {
    const setting = async (p: typeof pool) =>
      (await p().query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;
    expect(await setting(logPool)).toBe('off');
    expect(await setting(pool)).toBe('on');
  });

  it('writes exactly one row per call, with no audit entry', async () => {
    const ref = uniq('req');
    const audit = await db.auditEntry.count();
    await logIncidentAccess(support, ref, 'page');
    await logIncidentAccess(support, ref, 'page');
    expect(await db.incidentAccessLog.count({ where: { requestRef: ref } })).toBe(2);
    expect(await db.auditEntry.count()).toBe(audit);
  });

  it('stores what PostgreSQL can hold of an odd reference: NUL removed, capped', async () => {
    const ref = uniq('req');
    await logIncidentAccess(support, `${ref}\u0000x`, 'json');
    await logIncidentAccess(support, `${ref}${'y'.repeat(400)}`, 'json');
    expect(await db.incidentAccessLog.count({ where: { requestRef: `${ref}x` } })).toBe(1);
    const long = await db.incidentAccessLog.findFirst({
      where: { requestRef: { startsWith: `${ref}y` } },
      select: { requestRef: true },
    });
    expect(long?.requestRef).toHaveLength(255);
  });

  it('the database refuses a kind or format outside the lists', async () => {
    await expect(
      db.incidentAccessLog.create({ data: { actor: 'x', actorKind: 'robot', requestRef: 'r', format: 'page' } }),
    ).rejects.toThrow();
    await expect(
      db.incidentAccessLog.create({ data: { actor: 'x', actorKind: 'session', requestRef: 'r', format: 'pdf' } }),
    ).rejects.toThrow();
  });
});

describe('listIncidentAccess', () => {
  it('is for admins only: support and reviewers are refused', async () => {
    expect(await listIncidentAccess(support)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect(await listIncidentAccess(reviewer)).toMatchObject({ ok: false, failure: 'forbidden' });
    expect((await listIncidentAccess(admin)).ok).toBe(true);
  });

  it('lists newest first, filters by reference and by actor, and names API keys', async () => {
    const ref = uniq('req');
    await logIncidentAccess(support, ref, 'page');
    await sleep(3);
    await logIncidentAccess(key, ref, 'json');
    await sleep(3);
    await logIncidentAccess(
      { ...reviewer, kind: 'user', tokenId: '00000000-0000-4000-8000-000000000001' },
      ref,
      'markdown',
    );
    await logIncidentAccess(support, uniq('req'), 'page');

    const byRef = value(await listIncidentAccess(admin, { requestRef: ref })).items;
    expect(byRef.map((e) => [e.actor, e.actorKind, e.format, e.keyName])).toEqual([
      [reviewer.email, 'personal_token', 'markdown', null],
      [`api_key:${key.keyId}`, 'api_key', 'json', key.name],
      [support.email, 'session', 'page', null],
    ]);
    // The actor filter matches part of it, in any case.
    const bySupport = value(
      await listIncidentAccess(admin, { requestRef: ref, actor: support.email.toUpperCase().slice(0, 20) }),
    ).items;
    expect(bySupport.map((e) => e.actor)).toEqual([support.email]);
    const byKey = value(await listIncidentAccess(admin, { actor: `api_key:${key.keyId}` })).items;
    expect(byKey.map((e) => e.requestRef)).toEqual([ref]);
  });

  it('pages with a cursor, without gaps or repeats, even when times tie', async () => {
    const ref = uniq('req');
    // Same millisecond for all: the id breaks the tie.
    const at = new Date();
    await db.incidentAccessLog.createMany({
      data: Array.from({ length: 7 }, () => ({
        actor: support.email,
        actorKind: 'session',
        requestRef: ref,
        format: 'page',
        at,
      })),
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query = accessLogQuerySchema.parse({ requestRef: ref, limit: '3', ...(cursor ? { cursor } : {}) });
      const page = value(await listIncidentAccess(admin, query));
      seen.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect(seen).toEqual([...seen].sort().reverse());
  });
});
