import { describe, expect, it, vi } from 'vitest';
import type { Session } from 'next-auth';
import { ok } from '@/lib/result';

// What Auth.js would read from the cookie (it cannot run outside Next): set per test.
const cookie = vi.hoisted(() => ({ session: null as Session | null }));
vi.mock('./auth', () => ({ auth: async () => cookie.session }));

const { getSession } = await import('./session');
const { apiRoute } = await import('../http/api-route');
const { openSession } = await import('../users/sessions');
const { makeUser } = await import('../../../testing/factories');

const route = apiRoute({ action: 'outcomes.read' }, async ({ actor }) =>
  ok({ kind: actor.kind, email: 'email' in actor ? actor.email : null }),
);
const call = (method: 'GET' | 'POST', origin?: string) =>
  route(
    new Request('http://console.test/api/v1/me', {
      method,
      headers: { host: 'console.test', ...(origin ? { origin } : {}) },
      ...(method === 'POST' ? { body: '{}' } : {}),
    }),
    { params: Promise.resolve({}) },
  );

const signedIn = (userId: string, sessionId?: string, sessionVersion?: number): Session => ({
  user: { id: userId },
  expires: new Date(Date.now() + 3_600_000).toISOString(),
  ...(sessionId === undefined ? {} : { sessionId }),
  ...(sessionVersion === undefined ? {} : { sessionVersion }),
});

describe('the console session, in pages (getSession) and in the API wrapper (real PostgreSQL)', () => {
  it('a live session: the person, in both', async () => {
    const u = await makeUser('reviewer');
    const s = await openSession(u.userId, 'password', 'Chrome on Linux', '127.0.0.1');
    cookie.session = signedIn(u.userId, s.id, s.version);
    expect(await getSession()).toMatchObject({ sessionId: s.id, viewer: { userId: u.userId, email: u.email } });
    const res = await call('GET');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kind: 'user', email: u.email });
    expect((await call('POST', 'http://console.test')).status).toBe(200);
  });

  it('no cookie, no session named, an old version, another person or an unknown session: nobody, in both (401)', async () => {
    const u = await makeUser('reviewer');
    const s = await openSession(u.userId, 'password', 'Chrome on Linux', '127.0.0.1');
    const other = await makeUser('reviewer');
    for (const session of [
      null,
      signedIn(u.userId),
      signedIn(u.userId, s.id),
      signedIn(u.userId, s.id, s.version + 1),
      signedIn(other.userId, s.id, s.version),
      signedIn(u.userId, '00000000-0000-4000-8000-000000000000', s.version),
    ]) {
      cookie.session = session;
      expect(await getSession()).toBeNull();
      expect((await call('GET')).status).toBe(401);
    }
  });

  it('a state change with a session cookie from another origin, or none: 403 before the session is looked up', async () => {
    const u = await makeUser('reviewer');
    const s = await openSession(u.userId, 'password', 'Chrome on Linux', '127.0.0.1');
    for (const session of [signedIn(u.userId, s.id, s.version), signedIn(u.userId, s.id, s.version + 1)]) {
      cookie.session = session;
      expect((await call('POST')).status).toBe(403);
      expect((await call('POST', 'https://elsewhere.test')).status).toBe(403);
    }
    cookie.session = null;
    expect((await call('POST')).status).toBe(401);
  });
});
