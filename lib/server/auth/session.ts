import 'server-only';
import { cache } from 'react';
import { forbidden, redirect } from 'next/navigation';
import { auth } from './auth';
import { findSessionViewer } from '../users/sessions';
import { authorize, type Action, type Viewer } from '@/lib/auth/permissions';

/** What the session cookie says, before the database is asked: who, and which session of theirs. */
export type SessionCookie = { userId: string; sessionId?: string; sessionVersion?: number };

/** The session cookie's claims, or null when nobody is signed in (no cookie, or one Auth.js refused). */
export async function readSessionCookie(): Promise<SessionCookie | null> {
  const session = await auth();
  const userId = session?.user?.id;
  if (!userId) return null;
  return { userId, sessionId: session.sessionId, sessionVersion: session.sessionVersion };
}

/**
 * The cookie alone is never enough: the signed-in, enabled user with their current role, and only
 * while the session the cookie names is live (not ended, of the person's current version).
 */
export async function liveSession(cookie: SessionCookie): Promise<{ viewer: Viewer; sessionId: string } | null> {
  const { userId, sessionId, sessionVersion } = cookie;
  if (!sessionId || typeof sessionVersion !== 'number') return null;
  const viewer = await findSessionViewer(userId, sessionId, sessionVersion);
  return viewer ? { viewer, sessionId } : null;
}

/**
 * The one place that reads the session (pages and server actions here; the API route wrapper,
 * lib/server/http/api-route.ts, through the two steps above, with its Origin check between them).
 */
export const getSession = cache(async (): Promise<{ viewer: Viewer; sessionId: string } | null> => {
  const cookie = await readSessionCookie();
  return cookie ? liveSession(cookie) : null;
});

export const getViewer = cache(async (): Promise<Viewer | null> => (await getSession())?.viewer ?? null);

/** For pages: the viewer, or a redirect to sign-in; `forbidden()` when the role may not. */
export async function requireViewer(action: Action = 'console.view'): Promise<Viewer> {
  const viewer = await getViewer();
  if (!viewer) redirect('/sign-in');
  if (!authorize(viewer, action)) forbidden();
  return viewer;
}
